# Shared by deploy/podman/build.sh and smoke.sh (sourced, not run): podman's configuration,
# the cache directory, the local image names and small helpers.

PODMAN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$PODMAN_DIR/../.." && pwd)"

# podman reads this file instead of /etc/containers/containers.conf (runc, no default
# ulimits: see the file), so nothing under /etc needs editing.
export CONTAINERS_CONF="$PODMAN_DIR/containers.conf"

# The debootstrap root file systems (as tar files) and the build context live here; the images
# themselves live in podman's own storage. Kept between runs: delete it to start over.
CACHE="${CHESS_PODMAN_CACHE:-$REPO_ROOT/target/podman}"

# Which cargo build the images and the checks take their binaries from: `release` (the
# default: what an operator deploys) or `debug`, the test build CI has already made (the
# engine crates are optimised in it too, see Cargo.toml), so that CI does not compile the
# workspace a second time; its binaries are stripped of debug info on their way into an image.
PROFILE="${CHESS_PODMAN_PROFILE:-release}"
case "$PROFILE" in
release) CARGO_PROFILE_FLAGS=(--release) ;;
debug) CARGO_PROFILE_FLAGS=() ;;
*) echo "CHESS_PODMAN_PROFILE=$PROFILE: expected release or debug" >&2; exit 2 ;;
esac
RELEASE="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/$PROFILE"

# Local stand-ins for the base images the Dockerfile names (which cannot be pulled here).
BASE_DEBIAN=localhost/chess-debian:bookworm   # debian:bookworm-slim
BASE_CC=localhost/chess-cc:bookworm           # gcr.io/distroless/cc-debian12:nonroot
# The stand-in for the official postgres:15.10-bookworm that overlays/postgres names.
POSTGRES_IMAGE=localhost/chess-postgres:15-bookworm
# The services' images carry the tag the local overlay uses (`chess-gateway:local`, ...).
IMAGE_TAG=local

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() {
    printf '%s: %s\n' "$(basename "$0")" "$*" >&2
    exit 1
}

# Every tool named must be on PATH; the message says which Debian packages bring them.
require_tools() {
    local missing=()
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    ((${#missing[@]} == 0)) ||
        die "missing ${missing[*]}: apt-get install podman runc catatonit debootstrap (see deploy/README.md, \"Podman\")"
}

# A python3 with PyYAML and grpcio (Debian: python3-yaml python3-grpcio). PYTHON wins; then
# Debian's own interpreter, which a pyenv or venv python3 earlier on PATH may hide.
find_python() {
    local candidate
    for candidate in ${PYTHON:-} /usr/bin/python3 python3; do
        if "$candidate" -c 'import grpc, yaml' >/dev/null 2>&1; then
            echo "$candidate"
            return
        fi
    done
    die "no python3 with PyYAML and grpcio: apt-get install python3-yaml python3-grpcio (or set PYTHON)"
}

# Seconds since the epoch with a fraction, and a duration since such a stamp, for the figures.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
