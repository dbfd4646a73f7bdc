#!/usr/bin/env bash
# The multi-host fault harness: tests/hosts/run.sh [--short|--all] [--only NAME] [--write-docs]
# Run as root from anywhere. BIN=target/debug uses the test build's binaries (default
# target/release). Whatever happens (an error, Ctrl-C, a kill of the Python process), the
# namespaces it made are removed on the way out; leftovers of a killed run at the next start.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cleanup() {
    PYTHONDONTWRITEBYTECODE=1 python3 -c "import sys; sys.path.insert(0, '$here/harness'); import net; net.cleanup(); net.remove_work_dirs()" || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
PYTHONDONTWRITEBYTECODE=1 python3 "$here/harness/main.py" "$@"
