#!/usr/bin/env bash
# Builds and runs the GPU throughput bench in release mode and writes the figures to a file.
#
#   crates/nn-gpu/bench-gpu.sh [RESULT_FILE] [-- BENCH_ARGS...]
#
# RESULT_FILE defaults to target/bench-gpu-<host>-<date>.txt. BENCH_ARGS go to the bench
# binary: `--seconds N` per measurement (default 2), `--hidden H` for a random network of
# hidden size H instead of the default network. Example on a GPU machine:
#
#   crates/nn-gpu/bench-gpu.sh gpu-results.txt -- --seconds 3
#
# The file starts with the machine, the GPU (nvidia-smi where present), the Vulkan driver
# and the commit, then the bench output: the adapter wgpu chose and evaluations per second
# at batch sizes 1, 64, 1024 and 16384 for the GPU (one batch at a time, and a stream of
# batches with several in flight) and for the CPU backend, all in one run; then whole
# fixed-depth searches (SEARCH_DEPTH, default 8) evaluated incrementally on the CPU, in CPU
# batches and in GPU batches with 1, 8 and 64 searches at once (benches/search_backends.rs).
#
# Offline machines: cargo needs the crates. Either carry a target/ directory in which
# `cargo bench -p chess-nn-gpu --bench throughput --no-run` has already been run on the same
# toolchain (the script then only runs the binary), or vendor the dependencies beforehand
# (`cargo vendor` with network access, plus the .cargo/config.toml it prints). The script
# passes --offline when CARGO_NET_OFFLINE=true or --offline is given as the first argument.
#
# The machine needs a Vulkan loader and driver (on Debian: libvulkan1 and the vendor's
# driver; nvidia's ships its own ICD). Without any adapter the bench prints CPU figures only.
set -euo pipefail
cd "$(dirname "$0")/../.."

offline=()
if [[ "${1:-}" == "--offline" || "${CARGO_NET_OFFLINE:-}" == "true" ]]; then
    offline=(--offline)
    [[ "${1:-}" == "--offline" ]] && shift
fi
out="target/bench-gpu-$(hostname)-$(date +%Y%m%d-%H%M%S).txt"
if [[ $# -gt 0 && "$1" != "--" ]]; then
    out="$1"
    shift
fi
[[ "${1:-}" == "--" ]] && shift
mkdir -p "$(dirname "$out")"

cargo bench "${offline[@]}" -p chess-nn-gpu --bench throughput --bench search_backends --no-run

{
    echo "# chess-nn-gpu throughput bench"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified tree)')"
    echo "host: $(hostname); $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
    echo "rustc: $(rustc --version)"
    if command -v nvidia-smi >/dev/null; then
        echo "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
    fi
    if command -v vulkaninfo >/dev/null; then
        vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|driverName|driverInfo|apiVersion' | sed 's/^[[:space:]]*/vulkan: /' || true
    fi
    echo
    cargo bench "${offline[@]}" -q -p chess-nn-gpu --bench throughput -- "$@" 2>&1 | grep -v 'XDG_RUNTIME_DIR'
    echo
    echo "# whole searches: incremental CPU, CPU batches, GPU batches (1, 8, 64 at once)"
    cargo bench "${offline[@]}" -q -p chess-nn-gpu --bench search_backends -- --depth "${SEARCH_DEPTH:-8}" 2>&1 | grep -v 'XDG_RUNTIME_DIR'
} | tee "$out"
echo "results written to $out"
