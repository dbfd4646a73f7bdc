#!/usr/bin/env bash
# Whole-service analysis throughput of the search service's evaluation backends: `cpu`
# (one search per worker, incremental evaluation), `cpu-batched` and `gpu` (many searches per
# worker as coroutines, leaves evaluated in batches), under 1, 8 and 64 concurrent analyses.
# Every mode evaluates the same network, straight to the search service (no gateway).
#
#   cargo build --release -p chess-search-service -p chess-loadgen
#   docs/bench/backends.sh            # about 8 minutes
#
# NODES (default 20000) per analysis, SECS (default 20) per run, WARMUP (default 3),
# WORKERS (default: the machine's cores), TASKS (default 64) searches per batched worker,
# EVAL (default `default`, the embedded network), BIN (default target/release), OUT (default
# docs/bench/backends). Reports: OUT/<backend>-c<clients>.json and .txt, and OUT/summary.md
# (printed by docs/bench/backends-table.py from the reports).
# Without a GPU the `gpu` backend runs on whatever wgpu finds (Mesa's lavapipe: software
# Vulkan, labelled so in the summary) or falls back to the CPU (also labelled).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-target/release}
OUT=${OUT:-docs/bench/backends}
NODES=${NODES:-20000}
SECS=${SECS:-20}
WARMUP=${WARMUP:-3}
WORKERS=${WORKERS:-$(nproc)}
TASKS=${TASKS:-64}
EVAL=${EVAL:-default}
mkdir -p "$OUT"

log=$(mktemp)
svc=
stop() {
    if [ -n "$svc" ]; then
        kill "$svc" 2>/dev/null || true
        wait "$svc" 2>/dev/null || true
        svc=
    fi
}
trap 'stop; rm -f "$log"' EXIT

start() {
    "$BIN/chess-search-service" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
        --backend "$1" --workers "$WORKERS" --tasks "$TASKS" --queue 128 \
        --eval-file "$EVAL" --hash-mb 64 >"$log" 2>&1 &
    svc=$!
    for _ in $(seq 200); do
        grep -q '^LISTENING' "$log" && break
        kill -0 "$svc" 2>/dev/null || { cat "$log"; exit 1; }
        sleep 0.1
    done
    ADDR=$(sed -nE 's/^LISTENING .*grpc=([^ ]+).*/\1/p' "$log")
    METRICS=$(sed -nE 's/^LISTENING .*metrics=([^ ]+).*/\1/p' "$log")
    [ -n "$ADDR" ] || { echo "the search service did not start" >&2; cat "$log"; exit 1; }
}

{
    echo "# Search service backends: analyses/s at $NODES nodes each"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    if command -v nvidia-smi >/dev/null; then
        echo "- nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
    fi
    echo "- service: --workers $WORKERS --tasks $TASKS --eval-file $EVAL --hash-mb 64; ${SECS}s per run after ${WARMUP}s warm-up"
} >"$OUT/header.md"
: >"$OUT/labels.tsv"

for backend in cpu cpu-batched gpu; do
    start "$backend"
    sleep 1
    where=$backend
    if [ "$backend" = gpu ]; then
        # The worker logs the adapter it opened, or its fallback to the CPU.
        sleep 2
        if grep -q 'GPU backend unavailable' "$log"; then
            where="gpu (no adapter: CPU fallback)"
        elif grep -qiE 'software|llvmpipe|lavapipe' "$log"; then
            where="gpu (SOFTWARE Vulkan, lavapipe: not a GPU figure)"
        fi
        sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -m1 -E 'evaluating on the GPU|GPU backend unavailable' | cut -c1-300 >>"$OUT/adapter.txt" || true
    fi
    for clients in 1 8 64; do
        name="$backend-c$clients"
        echo "== $name"
        "$BIN/chess-loadgen" run --quiet --label "$name" --json "$OUT/$name.json" \
            --target "http://$ADDR" --scenario analyze --nodes "$NODES" --clients "$clients" \
            --duration "${SECS}s" --warmup "${WARMUP}s" --metrics "$METRICS" | tee "$OUT/$name.txt"
        printf '%s\t%s\t%s\n' "$name" "$where" "$clients" >>"$OUT/labels.tsv"
    done
    stop
done
docs/bench/backends-table.py "$OUT" >"$OUT/summary.md"
cat "$OUT/summary.md"
