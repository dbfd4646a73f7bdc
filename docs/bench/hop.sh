#!/usr/bin/env bash
# The gateway's hop for small calls: chess-loadgen straight at a backend and through
# chess-gateway, alternated in one run, with the CPU each process spends per call.
#
#   cargo build --release -p chess-gateway -p chess-rules-service -p chess-search-service \
#       -p chess-loadgen
#   docs/bench/hop.sh                 # about 9 minutes with the defaults
#
# Cases: the loadgen `rules` scenario (LegalMoves, PositionStatus, ValidateFen, ConvertMoves)
# and `moves` scenario (CreateGame and MakeMove: the game store's calls) against
# chess-rules-service on each store of STORES, and `evaluate --batch 16` against
# chess-search-service. Each case runs ROUNDS rounds of (direct, gateway), the order swapped
# every other round so drifting background load hits both alike.
#
# Settings (environment): SECS (default 10) per measured run, WARMUP (default 2) its warm-up,
# ROUNDS (default 3), CLIENTS (default 4, closed model, one connection), STORES (default
# "redb memory postgres"; postgres is a private server started here, see pg.sh, unless
# DATABASE_URL=postgres://user@host:port/db names one),
# EVALUATE (default 1; 0 skips the search case), PIN (default 0; 1 pins the gateway to CPU 1
# and the backend and the load generator to CPU 0, direct runs alike: a model of the gateway
# on a machine of its own, labelled so in the table), PERF (default 0; 1 records
# `perf record -g` of the gateway during each case's first gateway run and keeps the report),
# GATEWAY_THREADS (default: unset, the gateway's --worker-threads default, 1; N runs it with
# CHESS_GATEWAY_WORKER_THREADS=N, 0 one worker per CPU), BIN (default target/release), OUT (default docs/bench/hop).
#
# Reports: OUT/<case>-<direct|gateway>-r<round>.json and .txt (chess-loadgen's), OUT/cpu.tsv
# (CPU ticks of each process over each run, and the load average before it), OUT/machine.txt,
# and OUT/summary.md: the table printed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-target/release}
OUT=${OUT:-docs/bench/hop}
SECS=${SECS:-10}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-4}
STORES=${STORES:-redb memory postgres}
EVALUATE=${EVALUATE:-1}
PIN=${PIN:-0}
PERF=${PERF:-0}
GATEWAY_THREADS=${GATEWAY_THREADS:-}
DATABASE_URL=${DATABASE_URL:-}
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.txt "$OUT/cpu.tsv"

for b in chess-gateway chess-rules-service chess-search-service chess-loadgen; do
    [ -x "$BIN/$b" ] || { echo "$BIN/$b is missing: build it first (see the top of $0)" >&2; exit 1; }
done

if [ "$PIN" = 1 ]; then
    GW_CPU=(taskset -c 1)
    BACK_CPU=(taskset -c 0)
    PLACEMENT="pinned: gateway on CPU 1; backend and load generator on CPU 0 (direct runs alike)"
else
    GW_CPU=()
    BACK_CPU=()
    PLACEMENT="not pinned: all processes share the machine's $(nproc) CPUs"
fi
if [ -n "$GATEWAY_THREADS" ]; then
    GW_CPU=(env "CHESS_GATEWAY_WORKER_THREADS=$GATEWAY_THREADS" "${GW_CPU[@]}")
    PLACEMENT="$PLACEMENT; gateway with CHESS_GATEWAY_WORKER_THREADS=$GATEWAY_THREADS"
fi

tmp=$(mktemp -d)
pids=()
stop_all() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    pids=()
}
trap 'stop_all; pg_stop; rm -rf "$tmp"' EXIT
. docs/bench/pg.sh

# Starts a service ($1: a name for its log, the rest: the command), waits for its LISTENING
# line and sets PID and ADDR.
start() {
    local name=$1
    shift
    "$@" >"$tmp/$name.log" 2>&1 &
    PID=$!
    pids+=("$PID")
    for _ in $(seq 300); do
        grep -qs '^LISTENING' "$tmp/$name.log" && break
        kill -0 "$PID" 2>/dev/null || { echo "$name did not start:" >&2; cat "$tmp/$name.log" >&2; exit 1; }
        sleep 0.1
    done
    ADDR=$(sed -nE 's/^LISTENING .*grpc=([^ ]+).*/\1/p' "$tmp/$name.log")
    [ -n "$ADDR" ] || { echo "$name did not announce itself:" >&2; cat "$tmp/$name.log" >&2; exit 1; }
}

# utime + stime of a process, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "cpus: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "clock ticks per second: $(getconf CLK_TCK)"
    echo "placement: $PLACEMENT"
    echo "runs: ${SECS}s measured after ${WARMUP}s warm-up, $CLIENTS clients, $ROUNDS rounds"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"
printf 'case\tvia\tround\tloadavg1\tgateway_ticks\tbackend_ticks\tloadgen_user_s\tloadgen_sys_s\n' >"$OUT/cpu.tsv"

# One measured run: $1 case, $2 via (direct|gateway), $3 round, $4 target, $5 backend pid,
# $6 gateway pid, the rest: scenario arguments.
measure() {
    local case=$1 via=$2 round=$3 target=$4 backend=$5 gateway=$6
    shift 6
    local name="$case-$via-r$round"
    local load g0 b0 g1 b1 perf_pid=
    load=$(cut -d' ' -f1 /proc/loadavg)
    g0=$(ticks "$gateway")
    b0=$(ticks "$backend")
    if [ "$PERF" = 1 ] && [ "$via" = gateway ] && [ "$round" = 1 ]; then
        perf record -q -F 499 --call-graph dwarf,16384 -o "$tmp/perf-$case.data" -p "$gateway" \
            -- sleep "$((WARMUP + SECS))" >/dev/null 2>&1 &
        perf_pid=$!
    fi
    echo "== $name (load $load)"
    /usr/bin/time -f '%U %S' -o "$tmp/time" "${BACK_CPU[@]}" "$BIN/chess-loadgen" run --quiet \
        --label "$name" --json "$OUT/$name.json" --target "http://$target" --clients "$CLIENTS" \
        --duration "${SECS}s" --warmup "${WARMUP}s" "$@" | tee "$OUT/$name.txt"
    g1=$(ticks "$gateway")
    b1=$(ticks "$backend")
    if [ -n "$perf_pid" ]; then
        wait "$perf_pid" || true
        perf report -i "$tmp/perf-$case.data" --stdio --no-children --percent-limit 0.5 \
            --sort dso,symbol -g none 2>/dev/null | sed "s/  */ /g" | grep "%" >"$OUT/perf-$case-self.txt" || true
        perf report -i "$tmp/perf-$case.data" --stdio --children --percent-limit 2 \
            --sort symbol -g none 2>/dev/null | sed "s/  */ /g" | grep "%" >"$OUT/perf-$case-children.txt" || true
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$via" "$round" "$load" "$((g1 - g0))" \
        "$((b1 - b0))" "$(tr ' ' '\t' <"$tmp/time")" >>"$OUT/cpu.tsv"
}

# ROUNDS rounds of direct and gateway for one case: $1 case, $2 direct target, $3 backend
# pid, the rest: scenario arguments.
rounds() {
    local case=$1 direct=$2 backend=$3
    shift 3
    local round via
    for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) = 1 ]; then order="direct gateway"; else order="gateway direct"; fi
        for via in $order; do
            if [ "$via" = direct ]; then target=$direct; else target=$GW; fi
            measure "$case" "$via" "$round" "$target" "$backend" "$GW_PID" "$@"
        done
    done
}

start search "${BACK_CPU[@]}" "$BIN/chess-search-service" --listen 127.0.0.1:0 \
    --metrics-listen 127.0.0.1:0 --hash-mb 64
SEARCH=$ADDR
SEARCH_PID=$PID

first=1
for store in $STORES; do
    store_args=(--store "$store")
    case $store in
        redb) mkdir -p "$tmp/data-$store"; store_args+=(--data-dir "$tmp/data-$store") ;;
        memory) ;;
        postgres)
            # A private server unless DATABASE_URL names one.
            if [ -z "$DATABASE_URL" ]; then
                pg_start "$tmp" || { echo "skipping the postgres store" >&2; continue; }
                DATABASE_URL=$(pg_createdb chess_hop)
            fi
            store_args+=(--database-url "$DATABASE_URL")
            ;;
        *) echo "unknown store $store" >&2; exit 2 ;;
    esac
    start "rules-$store" "${BACK_CPU[@]}" "$BIN/chess-rules-service" --listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 "${store_args[@]}"
    RULES=$ADDR
    RULES_PID=$PID
    # The per-caller rate limit (100/s by default) would throttle the load generator, which
    # is one caller.
    start "gateway-$store" "${GW_CPU[@]}" "$BIN/chess-gateway" --listen 127.0.0.1:0 \
        --metrics-listen 127.0.0.1:0 --rules-addr "http://$RULES" --search-addr "http://$SEARCH" \
        --rate-limit 0
    GW=$ADDR
    GW_PID=$PID
    echo "store $store: rules $RULES, search $SEARCH, gateway $GW"
    rounds "rules-$store" "$RULES" "$RULES_PID" --scenario rules
    rounds "moves-$store" "$RULES" "$RULES_PID" --scenario moves
    if [ "$first" = 1 ] && [ "$EVALUATE" = 1 ]; then
        rounds "evaluate16" "$SEARCH" "$SEARCH_PID" --scenario evaluate --batch 16
    fi
    first=0
    kill "$GW_PID" "$RULES_PID"
    wait "$GW_PID" "$RULES_PID" 2>/dev/null || true
    pids=("$SEARCH_PID")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import csv, json, os, statistics, sys

out = sys.argv[1]
tick = os.sysconf("SC_CLK_TCK")
machine = open(os.path.join(out, "machine.txt")).read().strip().splitlines()
rows = list(csv.DictReader(open(os.path.join(out, "cpu.tsv")), delimiter="\t"))
cases = list(dict.fromkeys(r["case"] for r in rows))

def report(case, via, rnd):
    with open(os.path.join(out, f"{case}-{via}-r{rnd}.json")) as f:
        return json.load(f)

def cpu(row, calls):
    us = lambda s: s * 1e6 / calls if calls else 0.0
    return {
        "gateway": us(int(row["gateway_ticks"]) / tick),
        "backend": us(int(row["backend_ticks"]) / tick),
        "loadgen": us(float(row["loadgen_user_s"]) + float(row["loadgen_sys_s"])),
    }

print("# The gateway's hop: direct vs through chess-gateway")
print()
for line in machine:
    print(f"- {line}")
print()
print("| case | round | load (1 min) | direct calls/s | gateway calls/s | **throughput ratio** | "
      "direct p50 ms | gateway p50 ms | **p50 delta ms** | direct p99 ms | gateway p99 ms | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
summary = {}
cpus = {}
for case in cases:
    for row in rows:
        if row["case"] != case or row["via"] != "direct":
            continue
        rnd = row["round"]
        g_row = next(r for r in rows if r["case"] == case and r["via"] == "gateway" and r["round"] == rnd)
        d, g = report(case, "direct", rnd), report(case, "gateway", rnd)
        dr, gr = d["result"], g["result"]
        ratio = gr["ok_rate"] / dr["ok_rate"] if dr["ok_rate"] else 0.0
        delta = gr["latency_ms"]["p50"] - dr["latency_ms"]["p50"]
        summary.setdefault(case, []).append((ratio, delta))
        for via, r, rep in (("direct", row, d), ("gateway", g_row, g)):
            calls = rep["result"]["requests"] + rep.get("warmup", {}).get("requests", 0)
            cpus.setdefault((case, via), []).append(cpu(r, calls))
        print(f"| {case} | {rnd} | {row['loadavg1']} / {g_row['loadavg1']} | {dr['ok_rate']:.0f} | "
              f"{gr['ok_rate']:.0f} | **{ratio:.2f}** | {dr['latency_ms']['p50']:.3f} | "
              f"{gr['latency_ms']['p50']:.3f} | **{delta:+.3f}** | {dr['latency_ms']['p99']:.3f} | "
              f"{gr['latency_ms']['p99']:.3f} | {dr['errors']} / {gr['errors']} |")
print()
print("| case | throughput ratio (median of rounds) | p50 delta ms (median) |")
print("|---|---:|---:|")
for case, vals in summary.items():
    print(f"| {case} | {statistics.median(v[0] for v in vals):.2f} | "
          f"{statistics.median(v[1] for v in vals):+.3f} |")
print()
print("CPU time per call (µs, utime+stime of each process over warm-up and run, divided by the "
      "calls; mean of rounds):")
print()
print("| case | via | gateway µs/call | backend µs/call | load generator µs/call |")
print("|---|---|---:|---:|---:|")
for (case, via), vals in cpus.items():
    m = {k: statistics.mean(v[k] for v in vals) for k in ("gateway", "backend", "loadgen")}
    print(f"| {case} | {via} | {m['gateway']:.0f} | {m['backend']:.0f} | {m['loadgen']:.0f} |")
PY
