#!/usr/bin/env bash
# Reproduces the measurements of docs/benchmarks.md: starts `chess up` on free loopback ports,
# runs chess-loadgen against it (and straight at its search service for the gateway's
# overhead), and leaves every JSON report, summary and chart in docs/bench/.
#
#   cargo build --release -p chess-cli -p chess-loadgen
#   docs/bench/run.sh                 # about 9 minutes
#
# SECS (default 30) is the length of each measured run, WARMUP (default 5) its warm-up;
# BIN (default target/release) where the binaries are; OUT (default docs/bench) where the
# reports go.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-target/release}
OUT=${OUT:-docs/bench}
SECS=${SECS:-30}
WARMUP=${WARMUP:-5}
mkdir -p "$OUT"

log=$(mktemp)
# The gateway's per-caller rate limit (100/s by default) would throttle the load generator,
# which is one caller; `chess up` reads the gateway's environment fallbacks.
CHESS_GATEWAY_RATE_LIMIT=0 "$BIN/chess" up --memory \
    --listen 127.0.0.1:0 --rules-listen 127.0.0.1:0 --search-listen 127.0.0.1:0 >"$log" 2>&1 &
up=$!
trap 'kill "$up" 2>/dev/null || true; wait "$up" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 300); do
    grep -q '^chess up: ready' "$log" && break
    kill -0 "$up" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
done
grep -q '^chess up: ready' "$log" || { echo "chess up did not get ready" >&2; cat "$log"; exit 1; }
addr() { sed -nE "s/^LISTENING service=$1 .*$2=([^ ]+).*/\1/p" "$log"; }
GW=$(addr gateway grpc)
GWM=$(addr gateway metrics)
SE=$(addr search grpc)
SEM=$(addr search metrics)
echo "gateway $GW (metrics $GWM), search $SE (metrics $SEM)"
{
    echo "cpus: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "chess matches running: $(pgrep -fc 'match.py' || true)"
    pgrep -af 'match.py' | cut -c1-200 || true
} >"$OUT/machine.txt"

run() {
    local name=$1
    shift
    echo "== $name"
    "$BIN/chess-loadgen" run --quiet --label "$name" --json "$OUT/$name.json" "$@" | tee "$OUT/$name.txt"
}

# 1. Analysis throughput through the gateway: analyses per second at 100000 nodes each, with
#    1, 2, 4 and 8 concurrent clients (closed model), over the built-in 51 positions; two
#    rounds, one after the other, since the background load drifts.
for round in 1 2; do
    for n in 1 2 4 8; do
        run "analysis-gateway-c$n-r$round" --target "http://$GW" --scenario analyze \
            --nodes 100000 --clients "$n" --duration "${SECS}s" --warmup "${WARMUP}s" \
            --metrics "$GWM" --metrics "$SEM"
    done
done

# 2. The gateway's overhead: the same scenarios straight to the search service and through
#    the gateway, alternated (direct, gateway, direct, gateway) so that drifting background
#    load hits both alike.
for round in 1 2; do
    for via in direct gateway; do
        if [ "$via" = direct ]; then target=$SE; else target=$GW; fi
        run "overhead-analyze-$via-$round" --target "http://$target" --scenario analyze \
            --nodes 100000 --clients 2 --duration "$((SECS / 2))s" --warmup "${WARMUP}s" \
            --metrics "$GWM" --metrics "$SEM"
        run "overhead-evaluate-$via-$round" --target "http://$target" --scenario evaluate \
            --batch 16 --clients 4 --duration "$((SECS / 2))s" --warmup "${WARMUP}s" \
            --metrics "$GWM" --metrics "$SEM"
    done
done

# 3. A stepped run for the chart: 1, 2, 4, 8 clients, a quarter of the time each.
run "analysis-steps" --target "http://$GW" --scenario analyze --nodes 100000 \
    --clients 1,2,4,8 --step-duration "$((SECS / 2))s" --warmup "${WARMUP}s" \
    --metrics "$GWM" --metrics "$SEM" --svg "$OUT/analysis-steps.svg" \
    --timeline-csv "$OUT/analysis-steps-timeline.csv" --csv "$OUT/analysis-steps.csv"

# 4. An open-model run of the mix, for the coordinated-omission view.
run "mix-open" --target "http://$GW" --scenario mix --nodes 20000 --rate 20 \
    --duration "${SECS}s" --warmup "${WARMUP}s" --metrics "$GWM" --metrics "$SEM" \
    --svg "$OUT/mix-open.svg"

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

# The tables of docs/benchmarks.md, from the reports.
python3 - "$OUT" <<'PY' | tee "$OUT/tables.md"
import json, sys, os
out = sys.argv[1]
def load(name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)
def search_side(r):
    for s in r["server"]:
        if s.get("service") == "search" and s.get("search"):
            return s["search"]
    return {}
print("| clients | round | analyses/s | p50 ms | p90 ms | p99 ms | max ms | client nodes/s | search service nodes/s | errors |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in (1, 2, 4, 8):
    for rnd in (1, 2):
        r = load(f"analysis-gateway-c{n}-r{rnd}")
        res, lat = r["result"], r["result"]["latency_ms"]
        print(f"| {n} | {rnd} | {res['ok_rate']:.2f} | {lat['p50']:.0f} | {lat['p90']:.0f} | {lat['p99']:.0f} | "
              f"{lat['max']:.0f} | {res['engine']['nodes_per_s']/1e3:.0f} k | "
              f"{search_side(r).get('nodes_per_s', 0)/1e3:.0f} k | {res['errors']} |")
print()
print("| clients | analyses/s (two rounds) | mean |")
print("|---:|---:|---:|")
for n in (1, 2, 4, 8):
    rates = [load(f"analysis-gateway-c{n}-r{rnd}")["result"]["ok_rate"] for rnd in (1, 2)]
    print(f"| {n} | {min(rates):.2f} - {max(rates):.2f} | {sum(rates)/len(rates):.2f} |")
print()
print("| scenario | round | direct: req/s | gateway: req/s | direct p50 ms | gateway p50 ms | p50 ratio | direct p99 ms | gateway p99 ms | p99 ratio | throughput ratio |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for scenario in ("analyze", "evaluate"):
    for rnd in (1, 2):
        d = load(f"overhead-{scenario}-direct-{rnd}")["result"]
        g = load(f"overhead-{scenario}-gateway-{rnd}")["result"]
        dl, gl = d["latency_ms"], g["latency_ms"]
        print(f"| {scenario} | {rnd} | {d['ok_rate']:.1f} | {g['ok_rate']:.1f} | {dl['p50']:.2f} | {gl['p50']:.2f} | "
              f"{gl['p50']/dl['p50']:.2f} | {dl['p99']:.2f} | {gl['p99']:.2f} | {gl['p99']/dl['p99']:.2f} | "
              f"{g['ok_rate']/d['ok_rate']:.2f} |")
PY
