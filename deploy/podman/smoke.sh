#!/usr/bin/env bash
# Runs deploy/k8s/overlays/postgres (the local overlay, the `postgres` component with two rules
# replicas, and the PostgreSQL StatefulSet) under podman with the images of build.sh, checks
# it, and takes everything down again, also when a check fails.
#
#   deploy/podman/smoke.sh [--no-build] [--no-cargo] [--keep]
#
#   --no-build  use the images as they are (default: run build.sh first; its bases are cached)
#   --no-cargo  use target/release as it is (default: cargo build --release the five binaries)
#   --keep      leave the deployment running after the checks
#   --up        deploy, wait until every probe passes, check nothing and leave it running
#   --down      take down what an earlier --keep or --up left running
#
# The checks: every container passes its startup, readiness and liveness probes; the gateway,
# published on 127.0.0.1 only, answers health, reflection, and chess-loadgen's `mix` for 30 s
# without an error while the probes keep passing; games keep every acknowledged move across a
# graceful restart and a SIGKILL of the rules replicas, and across a restart of PostgreSQL
# with its volume; the processes run as the manifests' non-root users without capabilities, with
# no_new_privs, a seccomp filter and a read-only root file system. The pods talk over a podman
# network of this script's own in 198.18.0.0/15, and a firewall rule (removed at the end)
# drops, and counts, anything they send to another address: the count must be 0.
#
# Without podman it says so and exits 0, except under CI=true, where that is a failure.
# Settings: CHESS_PODMAN_SUBNET (198.18.251.0/24), CHESS_PODMAN_PORT (15051),
# CHESS_PODMAN_LOAD_SECONDS (30).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$REPO_ROOT"

if ! command -v podman >/dev/null 2>&1; then
    if [[ "${CI:-}" == true ]]; then
        die "podman not found (CI=true): apt-get install podman runc catatonit debootstrap"
    fi
    echo "smoke.sh: podman not found: skipped (apt-get install podman runc catatonit debootstrap to run it)"
    exit 0
fi

build=true
cargo=true
keep=false
up_only=false
down_only=false
for arg in "$@"; do
    case "$arg" in
    --no-build) build=false ;;
    --no-cargo) cargo=false ;;
    --keep) keep=true ;;
    --up) keep=true up_only=true ;;
    --down) down_only=true ;;
    *) die "unknown argument $arg (usage: smoke.sh [--no-build] [--no-cargo] [--keep | --up] | --down)" ;;
    esac
done

require_tools podman runc catatonit iptables
# The pods find each other by Service name through aardvark-dns, which only netavark runs
# (containers.conf asks for it; with CNI there is no name server and nothing starts).
backend=$(podman info --format '{{.Host.NetworkBackend}}')
[[ "$backend" == netavark ]] ||
    die "podman's network backend is $backend, not netavark: apt-get install netavark aardvark-dns"
PY="$(find_python)"
NETWORK=chess-podman-smoke
SUBNET="${CHESS_PODMAN_SUBNET:-198.18.251.0/24}"
PORT="${CHESS_PODMAN_PORT:-15051}"
LOAD_SECONDS="${CHESS_PODMAN_LOAD_SECONDS:-30}"
API_KEY=local-example-key # the local overlay's example key
WORK="$CACHE/smoke"
PLAN="$WORK/kube/plan.json"

# The one firewall rule this script adds: nothing from the network's subnet is forwarded to
# any other address (podman's bridge networks masquerade to the world otherwise, and an
# --internal network cannot publish ports). Its packet counter is the check that nothing tried.
FIREWALL=(FORWARD -s "$SUBNET" ! -d "$SUBNET" -m comment --comment "chess-podman-smoke: $SUBNET stays within itself" -j DROP)
# And what it drops goes to the kernel log (dmesg), for the failure message.
FIREWALL_LOG=(FORWARD -s "$SUBNET" ! -d "$SUBNET" -m comment --comment "chess-podman-smoke: log" -m limit --limit 10/second -j LOG --log-prefix "chess-podman-smoke: ")

# The names of the plan's pods.
plan_pods() {
    "$PY" -c 'import json,sys; print(" ".join(p["name"] for p in json.load(open(sys.argv[1]))["pods"]))' "$PLAN"
}

# Everything this script creates, by name: the pods of the plan (with their containers and
# anonymous volumes), the named volumes of the plan, the network, the firewall rule, the work
# directory.
take_down() {
    local pod ctr vols=()
    if [[ -f "$PLAN" ]]; then
        for pod in $(plan_pods); do
            podman pod exists "$pod" || continue
            for ctr in $(podman pod inspect --format '{{range .Containers}}{{.Name}} {{end}}' "$pod"); do
                vols+=($(podman inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' "$ctr" 2>/dev/null))
            done
            podman pod rm --force --time 5 "$pod" >/dev/null
        done
        vols+=($("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["volumes"]))' "$PLAN"))
    fi
    for vol in "${vols[@]}"; do
        podman volume exists "$vol" && podman volume rm --force "$vol" >/dev/null
    done
    if podman network exists "$NETWORK"; then
        podman network rm --force "$NETWORK" >/dev/null
    fi
    while iptables -D "${FIREWALL[@]}" 2>/dev/null; do :; done
    while iptables -D "${FIREWALL_LOG[@]}" 2>/dev/null; do :; done
    rm -rf "$WORK"
}

# On a failure, the last lines each container printed (the probes say only that a check failed).
show_logs() {
    local pod ctr
    [[ -f "$PLAN" ]] || return 0
    for pod in $(plan_pods); do
        podman pod exists "$pod" || continue
        for ctr in $(podman pod inspect --format '{{range .Containers}}{{.Name}} {{end}}' "$pod"); do
            [[ "$ctr" == *-infra ]] && continue
            echo "---- $ctr: $(podman inspect --format '{{.State.Status}} (exit {{.State.ExitCode}})' "$ctr" 2>/dev/null), last 40 lines" >&2
            podman logs --tail 40 "$ctr" 2>&1 | cut -c1-400 >&2 || true
        done
    done
}

if $down_only; then
    take_down
    exit 0
fi

# A leftover of an interrupted run would be in the way.
take_down
if ! $keep; then
    trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; wait; ((status == 0)) || show_logs; log "taking the deployment down"; take_down; exit $status' EXIT
fi

# ------------------------------------------------------------------------------- images

if $build; then
    build_args=()
    $cargo || build_args+=(--no-cargo)
    deploy/podman/build.sh "${build_args[@]}"
fi
if $cargo; then
    cargo build "${CARGO_PROFILE_FLAGS[@]}" --locked --bin chess --bin chess-loadgen
fi
for bin in chess chess-loadgen; do
    [[ -x "$RELEASE/$bin" ]] || die "$RELEASE/$bin missing: cargo build ${CARGO_PROFILE_FLAGS[*]} --locked --bins"
done
export CHESS_CLI="$RELEASE/chess"

# ---------------------------------------------------------------------------- manifests

KUBECTL="$(command -v kubectl || true)"
[[ -n "$KUBECTL" ]] || KUBECTL="$REPO_ROOT/target/deploy-tools/bin/kubectl"
[[ -x "$KUBECTL" ]] ||
    die "kubectl not found: python3 -m venv target/deploy-tools && target/deploy-tools/bin/pip install -r deploy/validate-requirements.txt"
mkdir -p "$WORK"
"$KUBECTL" kustomize deploy/k8s/overlays/postgres >"$WORK/rendered.yaml"
image_args=()
for image in chess-gateway chess-rules-service chess-search-service; do
    image_args+=(--image "$image:$IMAGE_TAG=localhost/$image:$IMAGE_TAG")
done
"$PY" deploy/podman/kube.py --out "$WORK/kube" --secrets "$WORK/secrets" "${image_args[@]}" \
    --image "postgres:15.10-bookworm=$POSTGRES_IMAGE" \
    --publish "chess-gateway=127.0.0.1:$PORT" --dns "$("$PY" -c 'import ipaddress,sys; print(ipaddress.ip_network(sys.argv[1])[1])' "$SUBNET")" \
    "$WORK/rendered.yaml"

# ---------------------------------------------------------------------------------- up

log "network $NETWORK ($SUBNET; forwarding beyond it dropped)"
podman network create --subnet "$SUBNET" "$NETWORK" >/dev/null
iptables -I "${FIREWALL[@]}"
iptables -I "${FIREWALL_LOG[@]}"
for vol in $("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["volumes"]))' "$PLAN"); do
    podman volume create "$vol" >/dev/null
done
started=$(now)
# Each pod gets a fixed address (the subnet's 11th, 12th, ...) and a MAC address made from it: a
# cluster keeps a pod's network when its container restarts, and so the pods here keep theirs
# when `podman pod start` brings them back (below); with a new MAC the other pods' neighbour
# caches would send to the old one for half a minute.
while IFS=$'\t' read -r pod file ip mac aliases; do
    log "podman kube play $pod ($ip; DNS names: ${aliases//,/, })"
    network="$NETWORK:ip=$ip,mac=$mac"
    [[ -n "$aliases" ]] && network+=",alias=${aliases//,/,alias=}"
    podman kube play --quiet --network "$network" "$file" >/dev/null
done < <("$PY" -c '
import ipaddress, json, sys
net = ipaddress.ip_network(sys.argv[2])
for i, p in enumerate(json.load(open(sys.argv[1]))["pods"]):
    ip = net[11 + i]
    mac = "02:00:" + ":".join(f"{b:02x}" for b in ip.packed)
    print(p["name"], p["file"], ip, mac, ",".join(p["aliases"]), sep="\t")' "$PLAN" "$SUBNET")
log "probes (startup, readiness, liveness)"
"$PY" deploy/podman/probe.py wait "$PLAN" --timeout 240
START_SECONDS=$(since "$started")
log "deployment up and ready in $START_SECONDS s"

# ------------------------------------------------------------------------------ checks

log "network: every pod on $NETWORK ($SUBNET) alone, the gateway published on 127.0.0.1:$PORT only"
for pod in $(plan_pods); do
    infra=$(podman pod inspect --format '{{.InfraContainerID}}' "$pod")
    nets=$(podman inspect --format '{{range $name, $n := .NetworkSettings.Networks}}{{$name}}={{$n.IPAddress}} {{end}}' "$infra")
    echo "  $pod: $nets" >&2
    [[ "$nets" =~ ^$NETWORK=198\.1[89]\.[0-9.]+\ $ ]] || die "$pod is not on $NETWORK alone: $nets"
done
published=$(podman ps --format '{{.Names}} {{.Ports}}' | awk 'NF > 1 && $1 !~ /-infra$/')
echo "  published: $published" >&2
[[ "$published" == "chess-gateway-0-gateway 127.0.0.1:$PORT->50051/tcp" ]] || die "unexpected published ports: $published"

log "security context at run time"
"$PY" deploy/podman/probe.py security "$PLAN"

log "gateway from the host: health and reflection"
"$PY" deploy/podman/probe.py health "127.0.0.1:$PORT" >/dev/null
"$PY" deploy/podman/probe.py health "127.0.0.1:$PORT" chess.v1.GatewayService >/dev/null
services=$("$PY" deploy/podman/probe.py reflection "127.0.0.1:$PORT")
echo "  health SERVING; reflection lists: $(echo $services)" >&2
for s in chess.v1.GameService chess.v1.RulesService chess.v1.AnalysisService grpc.health.v1.Health; do
    grep -qx "$s" <<<"$services" || die "reflection does not list $s"
done

export CHESS_SERVER="http://127.0.0.1:$PORT" CHESS_API_KEY="$API_KEY"
if $up_only; then
    log "left running: CHESS_SERVER=http://127.0.0.1:$PORT CHESS_API_KEY=$API_KEY; take it down with deploy/podman/smoke.sh --down"
    exit 0
fi
log "chess-loadgen mix for $LOAD_SECONDS s (the probes keep running)"
"$PY" deploy/podman/probe.py watch "$PLAN" --seconds "$((LOAD_SECONDS + 5))" &
watcher=$!
"$RELEASE/chess-loadgen" run --target "$CHESS_SERVER" --scenario mix --rate 20 \
    --duration "${LOAD_SECONDS}s" --nodes 20000 --quiet --json "$WORK/loadgen.json" >"$WORK/loadgen.txt"
cat "$WORK/loadgen.txt" >&2
wait "$watcher"
errors=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["result"]["errors"])' "$WORK/loadgen.json")
[[ "$errors" == 0 ]] || die "chess-loadgen saw $errors errors"

STATE="$WORK/games.json"
log "games: 12 new games, 6 plies each"
"$PY" deploy/podman/games.py create "$STATE" --games 12
"$PY" deploy/podman/games.py play "$STATE" --plies 6
"$PY" deploy/podman/games.py verify "$STATE"

# The kubelet restarts a stopped container inside the running pod. kube play's pods stop with
# their last container (podman 4.3 sets the pod exit policy `stop`, whatever containers.conf
# says), so here `podman pod start` brings the pod's infra container (network namespace, its
# fixed address, the DNS names) and the container back.
grace() {
    "$PY" -c 'import json,sys; print(next(p["grace_seconds"] for p in json.load(open(sys.argv[1]))["pods"] if p["name"] == sys.argv[2]))' "$PLAN" "$1"
}
restart() { # POD CONTAINER SIGNAL
    local t
    t=$(now)
    if [[ "$3" == TERM ]]; then
        podman stop --time "$(grace "$1")" "$2" >/dev/null
    else
        podman kill --signal "$3" "$2" >/dev/null
        podman wait "$2" >/dev/null || true
    fi
    local status
    status=$(podman inspect --format '{{.State.Status}} (exit code {{.State.ExitCode}})' "$2")
    podman pod start "$1" >/dev/null
    "$PY" deploy/podman/probe.py wait "$PLAN" --pod "$1" --timeout 180 2>/dev/null
    echo "  $2: SIG$3, $status, started again and ready in $(since "$t") s" >&2
}

log "games go on while rules replica 0 restarts (SIGTERM) and replica 1 is killed (SIGKILL)"
"$PY" deploy/podman/games.py play "$STATE" --plies 12 --pause 0.05 &
player=$!
sleep 2
restart chess-rules-0 chess-rules-0-rules TERM
sleep 2
restart chess-rules-1 chess-rules-1-rules KILL
wait "$player"
"$PY" deploy/podman/games.py verify "$STATE"

log "PostgreSQL restarted with its volume"
restart chess-postgres-0 chess-postgres-0-postgres TERM
"$PY" deploy/podman/probe.py wait "$PLAN" --timeout 120
"$PY" deploy/podman/games.py verify "$STATE"
log "games go on after the restart: 4 more plies each"
"$PY" deploy/podman/games.py play "$STATE" --plies 4
"$PY" deploy/podman/games.py verify "$STATE"

log "every probe still passes"
"$PY" deploy/podman/probe.py wait "$PLAN" --timeout 60
"$PY" deploy/podman/probe.py security "$PLAN" 2>/dev/null

dropped=$(iptables -L FORWARD -v -x -n | awk '/stays within itself/ { print $1 }')
log "packets from $SUBNET to any other address: ${dropped:-none counted} (dropped)"
if [[ "$dropped" != 0 ]]; then
    dmesg 2>/dev/null | grep 'chess-podman-smoke: ' | tail -20 >&2 || true
    die "the deployment sent $dropped packets beyond $SUBNET"
fi

log "smoke test passed (deployment ready in $START_SECONDS s)"
if $keep; then
    log "left running (--keep): CHESS_SERVER=$CHESS_SERVER CHESS_API_KEY=$API_KEY; take it down with deploy/podman/smoke.sh --down"
fi
