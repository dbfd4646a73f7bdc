#!/usr/bin/env bash
# Games per store: the chess-loadgen `game` scenario (CreateGame, the client's MakeMove with
# expected_ply, the engine's reply through EngineMove at depth 1) through the gateway, in one
# run, against
#   redb     one rules replica on redb (fsync on every commit, the default)
#   pg1      one rules replica on PostgreSQL
#   pg2      two rules replicas on one PostgreSQL database (gateway --rules-addr A,B)
# and, for the cost of making each move durable,
#   memory   one rules replica on the memory store (nothing written)
#   pg1-async one replica on a database with synchronous_commit=off (commit without WAL flush)
# alternated over ROUNDS rounds, with pg_test_fsync's figure for this disk. Reports (JSON and
# text per run, table.md, machine.txt) go to OUT.
#
#   cargo build --release -p chess-rules-service -p chess-gateway -p chess-search-service \
#       -p chess-loadgen
#   docs/bench/stores.sh              # about 5 minutes; needs PostgreSQL (Debian's postgresql)
#
# SECS (default 15) is each measured run, WARMUP (default 3) its warm-up, CLIENTS (default 8)
# the concurrent games, ROUNDS (default 2); BIN (default target/release), OUT (default
# docs/bench/stores), PG_BIN (default the newest /usr/lib/postgresql/*/bin).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-target/release}
OUT=${OUT:-docs/bench/stores}
SECS=${SECS:-15}
WARMUP=${WARMUP:-3}
CLIENTS=${CLIENTS:-8}
ROUNDS=${ROUNDS:-2}
. docs/bench/pg.sh
for b in chess-rules-service chess-gateway chess-search-service chess-loadgen; do
    [ -x "$BIN/$b" ] || { echo "$BIN/$b missing: build the release binaries first" >&2; exit 1; }
done
mkdir -p "$OUT"
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    pg_stop
    rm -rf "$work"
}
trap cleanup EXIT

pg_start "$work" || exit 1
SYNC_URL=$(pg_createdb chess_sync)
ASYNC_URL=$(pg_createdb chess_async)
pg_psql -c "ALTER DATABASE chess_async SET synchronous_commit = off"

# Starts a service in the background; sets ADDR and METRICS from its LISTENING line.
start() {
    local log="$work/$1.log"
    shift
    "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 300); do
        grep -qs "^LISTENING" "$log" && break
        kill -0 "${pids[-1]}" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.1
    done
    ADDR=$(sed -nE 's/^LISTENING .*grpc=([^ ]+).*/\1/p' "$log")
    METRICS=$(sed -nE 's/^LISTENING .*metrics=([^ ]+).*/\1/p' "$log")
    [ -n "$ADDR" ] || { echo "$1 did not start" >&2; cat "$log" >&2; exit 1; }
}
stop_all_but() {
    # Stops every service started after the first $1 (the search service stays).
    local keep=$1
    for p in "${pids[@]:$keep}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    pids=("${pids[@]:0:$keep}")
}
common=(--metrics-listen 127.0.0.1:0 --listen 127.0.0.1:0)

start search "$BIN/chess-search-service" "${common[@]}" --workers 2 --hash-mb 16
SEARCH=$ADDR

{
    echo "cpus: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "postgresql: $("$PG_BIN/postgres" --version)"
    echo "disk under $work: $(df -h "$work" | awk 'NR==2 {print $1, $2}')"
    echo "pg_test_fsync (open_datasync/fdatasync, 8 kB writes, ops/s):"
    pg_as "$PG_BIN/pg_test_fsync" -s 2 -f "$work/pg/fsync-test" 2>&1 | grep -E '^\s+(fdatasync|fsync|open_datasync) ' | head -3
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

run() {
    local name=$1
    shift
    local rules=("$@")
    local i=0 addrs=() metrics=()
    for r in "${rules[@]}"; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        start "rules-$name-$i" "$BIN/chess-rules-service" "${common[@]}" $r
        addrs+=("http://$ADDR")
        metrics+=(--metrics "$METRICS")
    done
    start "gateway-$name" "$BIN/chess-gateway" "${common[@]}" --rate-limit 0 \
        --rules-addr "$(IFS=,; echo "${addrs[*]}")" --search-addr "http://$SEARCH"
    echo "== $name (load $(cut -d' ' -f1 /proc/loadavg))"
    "$BIN/chess-loadgen" run --quiet --label "$name" --json "$OUT/$name-r$round.json" \
        --target "http://$ADDR" --scenario game --depth 1 --clients "$CLIENTS" \
        --duration "${SECS}s" --warmup "${WARMUP}s" --metrics "$METRICS" "${metrics[@]}" \
        | tee "$OUT/$name-r$round.txt"
    stop_all_but 1
}

for round in $(seq "$ROUNDS"); do
    run redb "--store redb --data-dir $work/redb-$round"
    run pg1 "--store postgres --database-url $SYNC_URL"
    run pg2 "--store postgres --database-url $SYNC_URL" "--store postgres --database-url $SYNC_URL"
    run memory "--store memory"
    run pg1-async "--store postgres --database-url $ASYNC_URL"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

python3 - "$OUT" "$ROUNDS" <<'EOF' | tee "$OUT/table.md"
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
names = [("redb", "1 replica, redb"), ("pg1", "1 replica, PostgreSQL"),
         ("pg2", "2 replicas, PostgreSQL"), ("memory", "1 replica, memory (no durability)"),
         ("pg1-async", "1 replica, PostgreSQL, synchronous_commit=off")]
def method(report, suffix):
    return next((m for m in report["methods"] if m["method"].endswith(suffix)), None)
print("| store | round | moves/s | MakeMove p50 | MakeMove p99 | EngineMove p50 | EngineMove p99 | games/s | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for key, label in names:
    for r in range(1, rounds + 1):
        rep = json.load(open(f"{out}/{key}-r{r}.json"))
        mm, em, cg = (method(rep, s) for s in ("/MakeMove", "/EngineMove", "/CreateGame"))
        ok_rate = lambda m: m["rate"] * m["ok"] / m["requests"] if m and m["requests"] else 0.0
        moves = ok_rate(mm) + ok_rate(em)
        errors = sum(m["errors"] for m in rep["methods"])
        ms = lambda m, p: f'{m["latency_ms"][p]:.2f} ms' if m else "-"
        games = ok_rate(cg)
        print(f"| {label} | {r} | {moves:.0f} | {ms(mm,'p50')} | {ms(mm,'p99')} | {ms(em,'p50')} | {ms(em,'p99')} | {games:.1f} | {errors} |")
EOF
