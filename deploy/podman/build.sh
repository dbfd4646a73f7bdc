#!/usr/bin/env bash
# Builds the platform's images with podman, offline apart from Debian's package mirror: the
# local base images from a debootstrap root file system (cached), then the service images from
# the Dockerfile's runtime stages (deploy/podman/containerfile.py) with the host's release
# binaries, and the PostgreSQL image overlays/postgres runs. deploy/README.md, "Podman", says
# what each image stands in for.
#
#   deploy/podman/build.sh [--gpu] [--no-cargo]
#
#   --gpu       also build chess-search-service-gpu (its base installs libvulkan1 with apt)
#   --no-cargo  use target/release as it is instead of running cargo build first
#
# Images (podman's storage, tagged as the local overlay names them):
#   localhost/chess-gateway:local, localhost/chess-rules-service:local,
#   localhost/chess-search-service:local [, localhost/chess-search-service-gpu:local],
#   localhost/chess-postgres:15-bookworm, and the bases localhost/chess-cc:bookworm and
#   localhost/chess-debian:bookworm.
# A base is rebuilt only when its recipe changed (a label records it); the root file system tar
# files stay in target/podman/ (CHESS_PODMAN_CACHE) between runs.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$REPO_ROOT"

gpu=false
cargo=true
for arg in "$@"; do
    case "$arg" in
    --gpu) gpu=true ;;
    --no-cargo) cargo=false ;;
    *) die "unknown argument $arg (usage: build.sh [--gpu] [--no-cargo])" ;;
    esac
done

require_tools podman runc debootstrap
PY="$(find_python)"
mkdir -p "$CACHE"
started=$(now)

# ------------------------------------------------------------------------------ binaries

BINARIES=(chess-gateway chess-rules-service chess-search-service)
if $cargo; then
    log "cargo build ${CARGO_PROFILE_FLAGS[*]} (${BINARIES[*]})"
    cargo build "${CARGO_PROFILE_FLAGS[@]}" --locked $(printf -- '--bin %s ' "${BINARIES[@]}")
fi
for bin in "${BINARIES[@]}"; do
    [[ -x "$RELEASE/$bin" ]] || die "$RELEASE/$bin missing: cargo build ${CARGO_PROFILE_FLAGS[*]} --locked --bins"
done

# ------------------------------------------------------------------------- root file system

# The mirror this machine's apt uses (deb822 `URIs:` or a one-line `deb` entry for bookworm),
# so debootstrap goes where apt-get goes. DEBIAN_MIRROR overrides it.
debian_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -r "$f" ]] || continue
        if [[ "$f" == *.sources ]]; then
            uri=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ && u != "" { print u; exit }' "$f")
        else
            uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' "$f")
        fi
        if [[ -n "$uri" ]]; then
            echo "$uri"
            return
        fi
    done
    echo http://deb.debian.org/debian
}
MIRROR="${DEBIAN_MIRROR:-$(debian_mirror)}"
SUITE=bookworm
# minbase plus what distroless's cc image has beyond it: the CA bundle and time zones.
INCLUDE=ca-certificates,tzdata
# The packages of the distroless-like base (gcr.io/distroless/cc-debian12 holds the same set:
# glibc, libgcc, libstdc++, OpenSSL, CA certificates, time zones, /etc/os-release).
CC_PACKAGES=(base-files libc6 libgcc-s1 libstdc++6 libssl3 tzdata)
RECIPE="debootstrap --variant=minbase --include=$INCLUDE $SUITE $MIRROR; slim; cc: ${CC_PACKAGES[*]} ca-bundle passwd:nonroot v2"
recipe_id=$(printf '%s' "$RECIPE" | sha256sum | cut -c1-16)
MINBASE_TAR="$CACHE/$SUITE-minbase-$recipe_id.tar"
CC_TAR="$CACHE/$SUITE-cc-$recipe_id.tar"

# The distroless-like tree: the files the packages above installed (dpkg's lists, through the
# merged-/usr links), the CA bundle update-ca-certificates made, the top-level links, and
# distroless's users (root, nonroot 65532, nobody).
make_cc_tree() {
    local rootfs="$1" cc="$2"
    "$PY" - "$rootfs" "$cc" "${CC_PACKAGES[@]}" <<'PYTHON'
import os, shutil, sys
rootfs, cc, packages = sys.argv[1], sys.argv[2], sys.argv[3:]
paths = {"/etc/ssl/certs/ca-certificates.crt"}
for pkg in packages:
    for name in (f"{pkg}.list", f"{pkg}:amd64.list"):
        list_file = os.path.join(rootfs, "var/lib/dpkg/info", name)
        if os.path.exists(list_file):
            with open(list_file) as f:
                paths.update(line.strip() for line in f if line.strip() not in ("", "/."))
            break
    else:
        sys.exit(f"build.sh: no dpkg file list for {pkg} in {rootfs}")

def copy(rel):
    """Copies rootfs/rel to cc/rel (a file, a link or a directory alone), parents first."""
    src, dst = os.path.join(rootfs, rel), os.path.join(cc, rel)
    if os.path.lexists(dst):
        return
    parent = os.path.dirname(rel)
    if parent:
        copy(parent)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
    elif os.path.isdir(src):
        os.mkdir(dst)
        shutil.copystat(src, dst)
        st = os.stat(src)
        os.chown(dst, st.st_uid, st.st_gid)
    else:
        shutil.copy2(src, dst)
        st = os.stat(src)
        os.chown(dst, st.st_uid, st.st_gid)

os.makedirs(cc, exist_ok=True)
for name in sorted(os.listdir(rootfs)):  # /bin -> usr/bin and the other merged-/usr links
    if os.path.islink(os.path.join(rootfs, name)):
        copy(name)
for path in sorted(paths):
    # The path as it is on disk: its directory through the links (/lib -> usr/lib).
    real_dir = os.path.realpath(os.path.join(rootfs, os.path.dirname(path).lstrip("/")))
    rel = os.path.relpath(os.path.join(real_dir, os.path.basename(path)), rootfs)
    if os.path.lexists(os.path.join(rootfs, rel)):
        copy(rel)
PYTHON
    mkdir -p "$cc/tmp" "$cc/root" "$cc/home/nonroot"
    chmod 1777 "$cc/tmp"
    chmod 0700 "$cc/root"
    chown 65532:65532 "$cc/home/nonroot"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$cc/etc/passwd"
    printf 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n' >"$cc/etc/group"
    chmod 0644 "$cc/etc/passwd" "$cc/etc/group"
}

# What makes debian:bookworm-slim slim (debuerreotype): apt keeps no package caches or
# translations, dpkg installs no documentation, manual pages or translations (copyright files
# stay); and the same removed from what debootstrap installed.
slim_rootfs() {
    local root="$1"
    cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
    echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
DPKG
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root/usr/share/"{groff,info,linda,lintian,locale,man}/*
    rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/cache/apt/"*.bin "$root/var/lib/apt/lists/"*
}

if [[ ! -s "$MINBASE_TAR" || ! -s "$CC_TAR" ]]; then
    log "debootstrap --variant=minbase --include=$INCLUDE $SUITE from $MIRROR"
    t=$(now)
    work="$CACHE/rootfs.tmp"
    rm -rf "$work" && mkdir -p "$work"
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$work/rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
        {
            tail -20 "$CACHE/debootstrap.log" >&2
            die "debootstrap failed (log: $CACHE/debootstrap.log)"
        }
    slim_rootfs "$work/rootfs"
    make_cc_tree "$work/rootfs" "$work/cc"
    tar --numeric-owner -C "$work/rootfs" -cf "$MINBASE_TAR.tmp" . && mv "$MINBASE_TAR.tmp" "$MINBASE_TAR"
    tar --numeric-owner -C "$work/cc" -cf "$CC_TAR.tmp" . && mv "$CC_TAR.tmp" "$CC_TAR"
    rm -rf "$work"
    # Root file systems of earlier recipes.
    find "$CACHE" -maxdepth 1 -name "$SUITE-*.tar" -not -name "*-$recipe_id.tar" -delete
    log "root file systems ready in $(since "$t") s"
fi

# podman import, unless an image of this recipe is there already.
import_base() {
    local tar="$1" image="$2"
    shift 2
    if [[ "$(podman image inspect --format '{{index .Labels "chess.podman.recipe"}}' "$image" 2>/dev/null)" == "$recipe_id" ]]; then
        return
    fi
    log "podman import $image"
    local change=(--change "LABEL chess.podman.recipe=$recipe_id")
    for c in "$@"; do change+=(--change "$c"); done
    podman import --quiet "${change[@]}" "$tar" "$image" >/dev/null
}
t=$(now)
PATH_ENV="ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
import_base "$MINBASE_TAR" "$BASE_DEBIAN" "$PATH_ENV" 'CMD ["bash"]'
# distroless's image config: its PATH, the CA bundle for OpenSSL, and the nonroot user.
import_base "$CC_TAR" "$BASE_CC" "$PATH_ENV" "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" "USER 65532:65532"
log "base images ready in $(since "$t") s"

# ------------------------------------------------------------------------- service images

CONTEXT="$CACHE/context"
rm -rf "$CONTEXT" && mkdir -p "$CONTEXT/bin" "$CONTEXT/skeleton/var/lib/chess" "$CONTEXT/deploy/docker"
for bin in "${BINARIES[@]}"; do
    install -m 0755 "$RELEASE/$bin" "$CONTEXT/bin/$bin"
    [[ "$PROFILE" == release ]] || objcopy --strip-debug "$CONTEXT/bin/$bin"
done
cp deploy/docker/nvidia_icd.json "$CONTEXT/deploy/docker/"
"$PY" deploy/podman/containerfile.py \
    --base "gcr.io/distroless/cc-debian12:nonroot=$BASE_CC" \
    --base "debian:bookworm-slim=$BASE_DEBIAN" \
    deploy/docker/Dockerfile "$CONTEXT/Containerfile" "$CONTEXT/bases.tsv"

VERSION=$(awk -F'"' '/^\[workspace.package\]/ { p = 1 } p && /^version *=/ { print $2; exit }' Cargo.toml)
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
targets=(gateway rules-service search-service)
$gpu && targets+=(search-service-gpu)
for target in "${targets[@]}"; do
    image="localhost/chess-$target:$IMAGE_TAG"
    base=$(awk -v t="$target" '$1 == t { print $2 }' "$CONTEXT/bases.tsv")
    log "podman build --target $target -> $image"
    t=$(now)
    # The GPU base runs apt-get (libvulkan1): its RUN step uses the host's network.
    podman build --quiet --network host --target "$target" \
        --build-arg VERSION="$VERSION" --build-arg REVISION="$REVISION" --build-arg CREATED="$CREATED" \
        --label org.opencontainers.image.base.name="$base" \
        -f "$CONTEXT/Containerfile" -t "$image" "$CONTEXT" >/dev/null
    log "  $image in $(since "$t") s"
done

# ------------------------------------------------------------------------------ PostgreSQL

pg_recipe=$(cat deploy/podman/postgres/Containerfile deploy/podman/postgres/entrypoint.sh | sha256sum | cut -c1-16)
if [[ "$(podman image inspect --format '{{index .Labels "chess.podman.recipe"}}' "$POSTGRES_IMAGE" 2>/dev/null)" != "$pg_recipe-$recipe_id" ]]; then
    log "podman build $POSTGRES_IMAGE (apt-get install postgresql-15)"
    t=$(now)
    podman build --quiet --network host --build-arg BASE="$BASE_DEBIAN" \
        --label chess.podman.recipe="$pg_recipe-$recipe_id" \
        -t "$POSTGRES_IMAGE" deploy/podman/postgres >/dev/null
    log "  $POSTGRES_IMAGE in $(since "$t") s"
fi

# Intermediate images of earlier builds (the tags moved on) only take space.
podman image prune --force >/dev/null

log "images (build.sh took $(since "$started") s):"
images=("$BASE_DEBIAN" "$BASE_CC")
for target in "${targets[@]}"; do images+=("localhost/chess-$target:$IMAGE_TAG"); done
images+=("$POSTGRES_IMAGE")
for image in "${images[@]}"; do
    podman image inspect --format '{{.Size}}' "$image" |
        awk -v i="$image" '{ printf "  %-45s %6.1f MB\n", i, $1 / 1e6 }' >&2
done
