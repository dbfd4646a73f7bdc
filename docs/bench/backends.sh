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
# docs/bench/backends). Reports: OUT/<backend>-c<clients>.json and .txt, and OUT/summary.md.
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
    echo
    echo "| backend | clients | analyses/s | nodes/s | p50 ms | p99 ms | errors | mean batch |"
    echo "|---|---|---|---|---|---|---|---|"
} >"$OUT/summary.md"

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
        grep -m1 -E 'evaluating on the GPU|GPU backend unavailable' "$log" | cut -c1-300 >>"$OUT/adapter.txt" || true
    fi
    for clients in 1 8 64; do
        name="$backend-c$clients"
        echo "== $name"
        before=$(curl -s "http://$METRICS/metrics" | awk '/^chess_search_eval_batch_size_(sum|count) /{print $2}' | tr '\n' ' ')
        "$BIN/chess-loadgen" run --quiet --label "$name" --json "$OUT/$name.json" \
            --target "http://$ADDR" --scenario analyze --nodes "$NODES" --clients "$clients" \
            --duration "${SECS}s" --warmup "${WARMUP}s" --metrics "$METRICS" | tee "$OUT/$name.txt"
        after=$(curl -s "http://$METRICS/metrics" | awk '/^chess_search_eval_batch_size_(sum|count) /{print $2}' | tr '\n' ' ')
        mean=$(python3 - "$before" "$after" <<'PY'
import sys
b = [float(x) for x in sys.argv[1].split()] or [0, 0]
a = [float(x) for x in sys.argv[2].split()] or [0, 0]
n = a[1] - b[1] if len(a) > 1 and len(b) > 1 else 0
print(f"{(a[0] - b[0]) / n:.1f}" if n > 0 else "-")
PY
)
        python3 - "$OUT/$name.json" "$where" "$clients" "$mean" >>"$OUT/summary.md" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["result"]
lat, eng = r["latency_ms"], r.get("engine") or {}
print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['ok_rate']:.2f} | {eng.get('nodes_per_s', 0):.0f} | "
      f"{lat['p50']:.0f} | {lat['p99']:.0f} | {r['errors']} | {sys.argv[4]} |")
PY
    done
    stop
done
cat "$OUT/summary.md"
