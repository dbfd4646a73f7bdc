#!/usr/bin/env bash
# The gateway's hop by CPU at a fixed rate: chess-loadgen's open model (RATE calls/s whether
# or not earlier calls were answered) straight at chess-rules-service and through
# chess-gateway, alternated in one run, with each process's CPU time divided by the calls
# answered. The gateway runs in a network namespace of its own, reached over a veth pair, as
# it would on a host of its own; the rules service and the load generator stay on the host
# side, on the pair's host address.
#
#   cargo build --release -p chess-gateway -p chess-rules-service -p chess-loadgen
#   sudo docs/bench/hop-rate.sh       # root: it makes the namespace; about 2 minutes
#
# Addresses: 198.18.1.1/30 (host side) and 198.18.1.2/30 (the gateway's namespace), from
# 198.18.0.0/15, the range set aside for network benchmarks. The namespace has no default
# route and no other interface than the veth end and its own loopback, so the gateway reaches
# nothing but the rules service. Namespace and veth pair are removed on exit, also on failure
# or Ctrl-C.
#
# Settings (environment): RATE (default 1000) calls/s, SECS (default 10) per measured run,
# WARMUP (default 2) its warm-up at the same rate, ROUNDS (default 3) rounds of (direct,
# gateway), the order swapped every other round, STORE (default memory), SCENARIO (default
# rules), GATEWAY_ENV (default empty: extra environment for the gateway, e.g.
# "TOKIO_WORKER_THREADS=2"), GATEWAY_ARGS (extra gateway flags), BIN (default target/release),
# CLOSED (default 4; 0: none) clients of a closed-model run of each case after the rounds, for
# the throughput ratio at saturation (at the fixed rate every case answers all calls),
# OUT (default docs/bench/hop-rate), BASELINE (default empty: a second chess-gateway binary,
# e.g. one built from an earlier commit, run beside the first in the same namespace and measured
# in every round as `baseline`, so that before and after see the same load), PERF (default 0; 1 records `perf record -g` of the gateway
# during the first gateway run and `perf stat` of each process in every run).
#
# Reports: OUT/<direct|gateway>-r<round>.json and .txt (chess-loadgen's), OUT/cpu.tsv (CPU
# ticks of the gateway, the rules service and the load generator over warm-up and run, their
# voluntary and involuntary context switches, the load average before each run),
# OUT/machine.txt and OUT/summary.md (the table printed at the end). STRACE=1 also counts the
# gateway's system calls (`strace -c -f`; STRACE_ARGS replaces -c) over the first gateway run,
# and the rules service's over the first direct run, in OUT/strace-<via>.txt; strace slows the
# process it watches, so the CPU figures of those runs are not comparable.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-target/release}
OUT=${OUT:-docs/bench/hop-rate}
RATE=${RATE:-1000}
SECS=${SECS:-10}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-3}
STORE=${STORE:-memory}
SCENARIO=${SCENARIO:-rules}
GATEWAY_ENV=${GATEWAY_ENV:-}
GATEWAY_ARGS=${GATEWAY_ARGS:-}
BASELINE=${BASELINE:-}
CLOSED=${CLOSED:-4}
PERF=${PERF:-0}
STRACE=${STRACE:-0}

[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || { echo "BASELINE=$BASELINE is not an executable" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$0 makes a network namespace: run it as root" >&2; exit 1; }
for b in chess-gateway chess-rules-service chess-loadgen; do
    [ -x "$BIN/$b" ] || { echo "$BIN/$b is missing: build it first (see the top of $0)" >&2; exit 1; }
done
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.txt "$OUT/cpu.tsv" "$OUT"/perf-*

NS=hopgw$$
HOST_IF=hoph$$
NS_IF=hopg$$
HOST_IP=198.18.1.1
NS_IP=198.18.1.2
tmp=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    ip link del "$HOST_IF" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The gateway's host: a namespace with one veth end, a /30 and no route beyond it.
ip netns add "$NS"
ip link add "$HOST_IF" type veth peer name "$NS_IF"
ip link set "$NS_IF" netns "$NS"
ip addr add "$HOST_IP/30" dev "$HOST_IF"
ip link set "$HOST_IF" up
ip netns exec "$NS" ip addr add "$NS_IP/30" dev "$NS_IF"
ip netns exec "$NS" ip link set "$NS_IF" up
ip netns exec "$NS" ip link set lo up
if ip netns exec "$NS" ip route show | grep -q '^default'; then
    echo "the namespace has a default route: refusing to run" >&2
    exit 1
fi

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

# utime and stime of a process (all its threads), in clock ticks, apart (user space; the kernel, which on this machine's tick accounting also
# takes the softirq work done in the process's context: a sender's TCP transmit runs the
# receiver's loopback or veth receive path).
split_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
# Voluntary and involuntary context switches of all of a process's threads.
switches() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '
        /^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2}
        END {print v "\t" n}'
}

start rules "$BIN/chess-rules-service" --listen "$HOST_IP:0" --metrics-listen 127.0.0.1:0 \
    --store "$STORE"
RULES=$ADDR
RULES_PID=$PID
# The gateway in its namespace (ip netns exec execs the binary, so $! is the gateway), with an
# API key as on a host of its own (a gateway off loopback wants keys). The per-caller rate
# limit (100/s by default) would throttle the load generator, one caller.
KEY=hop-bench-$$-$RANDOM$RANDOM
start_gateway() {
    local name=$1 bin=$2
    # shellcheck disable=SC2086
    start "$name" ip netns exec "$NS" env CHESS_API_KEYS="$KEY" $GATEWAY_ENV "$bin" \
        --listen "$NS_IP:0" --metrics-listen 127.0.0.1:0 --rules-addr "http://$RULES" \
        --rate-limit 0 $GATEWAY_ARGS
}
start_gateway gateway "$BIN/chess-gateway"
GW=$ADDR
GW_PID=$PID
VIAS="direct gateway"
if [ -n "$BASELINE" ]; then
    start_gateway baseline "$BASELINE"
    BASE_GW=$ADDR
    BASE_PID=$PID
    VIAS="direct gateway baseline"
    echo "baseline gateway $BASE_GW (pid $BASE_PID): $BASELINE"
fi
echo "rules $RULES (pid $RULES_PID), gateway $GW in namespace $NS (pid $GW_PID)"

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "cpus: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "clock ticks per second: $(getconf CLK_TCK)"
    echo "runs: scenario $SCENARIO, open model at $RATE calls/s, ${SECS}s measured after ${WARMUP}s warm-up, $ROUNDS rounds, store $STORE"
    echo "gateway: own network namespace ($NS_IP/30 over a veth pair; the rules service and the load generator on $HOST_IP)${GATEWAY_ENV:+, environment $GATEWAY_ENV}${GATEWAY_ARGS:+, flags $GATEWAY_ARGS}"
    echo "gateway threads: $(ls /proc/$GW_PID/task | wc -l); rules service threads: $(ls /proc/$RULES_PID/task | wc -l)"
    if [ -n "$BASELINE" ]; then
        echo "baseline gateway: $BASELINE ($(ls /proc/$BASE_PID/task | wc -l) threads), same namespace, flags and key"
    fi
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"
printf 'via\tround\tloadavg1\tgateway_ticks\tbackend_ticks\tloadgen_user_s\tloadgen_sys_s\tgateway_vcsw\tgateway_ivcsw\tbackend_vcsw\tbackend_ivcsw\tgateway_user_ticks\tgateway_sys_ticks\tbackend_user_ticks\tbackend_sys_ticks\n' >"$OUT/cpu.tsv"

# One measured run: $1 via (direct|gateway|baseline), $2 round, $3 target, the rest: the load
# (default: --rate RATE).
measure() {
    local via=$1 round=$2 target=$3 gw=$GW_PID
    shift 3
    local shape=(--rate "$RATE")
    [ $# -gt 0 ] && shape=("$@")
    local name="$via-r$round" load g0 b0 g1 b1 gs0 bs0 gs1 bs1 perf_pids=()
    [ "$via" = baseline ] && gw=$BASE_PID
    load=$(cut -d' ' -f1 /proc/loadavg)
    local gu0 gk0 bu0 bk0 gu1 gk1 bu1 bk1
    read -r gu0 gk0 <<<"$(split_ticks "$gw")"
    read -r bu0 bk0 <<<"$(split_ticks "$RULES_PID")"
    g0=$((gu0 + gk0))
    b0=$((bu0 + bk0))
    gs0=$(switches "$gw")
    bs0=$(switches "$RULES_PID")
    if [ "$PERF" = 1 ]; then
        local p
        for p in gateway:$gw rules:$RULES_PID; do
            perf stat -e task-clock,context-switches,cpu-migrations,page-faults -p "${p#*:}" \
                -o "$OUT/perf-stat-$name-${p%%:*}.txt" -- sleep "$((WARMUP + SECS))" >/dev/null 2>&1 &
            perf_pids+=($!)
        done
        if [ "$via" != direct ] && [ "$round" = 1 ]; then
            perf record -q -F 499 --call-graph "${PERF_CALLGRAPH:-dwarf,16384}" -o "$OUT/perf-$via.data" -p "$GW_PID" \
                -- sleep "$((WARMUP + SECS))" >/dev/null 2>&1 &
            perf_pids+=($!)
        fi
    fi
    if [ "$STRACE" = 1 ] && [ "$round" = 1 ]; then
        local who=$gw
        [ "$via" = direct ] && who=$RULES_PID
        # shellcheck disable=SC2086
        timeout -s INT "$((WARMUP + SECS))" strace ${STRACE_ARGS:--c} -f -o "$OUT/strace-$via.txt" -p "$who" 2>/dev/null &
        perf_pids+=($!)
    fi
    echo "== $name (load $load)"
    local key=(env -u CHESS_API_KEY)
    [ "$via" = direct ] || key=(env "CHESS_API_KEY=$KEY")
    "${key[@]}" /usr/bin/time -f '%U %S' -o "$tmp/time" "$BIN/chess-loadgen" run --quiet --label "$name" \
        --allow-remote --json "$OUT/$name.json" --target "http://$target" "${shape[@]}" \
        --duration "${SECS}s" --warmup "${WARMUP}s" --scenario "$SCENARIO" | tee "$OUT/$name.txt"
    read -r gu1 gk1 <<<"$(split_ticks "$gw")"
    read -r bu1 bk1 <<<"$(split_ticks "$RULES_PID")"
    g1=$((gu1 + gk1))
    b1=$((bu1 + bk1))
    gs1=$(switches "$gw")
    bs1=$(switches "$RULES_PID")
    for p in "${perf_pids[@]}"; do wait "$p" || true; done
    if [ "$PERF" = 1 ] && [ "$via" != direct ] && [ "$round" = 1 ]; then
        perf report -i "$OUT/perf-$via.data" --stdio --no-children --percent-limit 0.5 \
            --sort dso,symbol -g none 2>/dev/null | sed "s/  */ /g" | grep "%" >"$OUT/perf-$via-self.txt" || true
        perf report -i "$OUT/perf-$via.data" --stdio --children --percent-limit 2 \
            --sort symbol -g none 2>/dev/null | sed "s/  */ /g" | grep "%" >"$OUT/perf-$via-children.txt" || true
    fi
    local gv0 gi0 gv1 gi1 bv0 bi0 bv1 bi1
    read -r gv0 gi0 <<<"$gs0"
    read -r gv1 gi1 <<<"$gs1"
    read -r bv0 bi0 <<<"$bs0"
    read -r bv1 bi1 <<<"$bs1"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$via" "$round" "$load" "$((g1 - g0))" \
        "$((b1 - b0))" "$(tr ' ' '\t' <"$tmp/time")" "$((gv1 - gv0))" "$((gi1 - gi0))" \
        "$((bv1 - bv0))" "$((bi1 - bi0))" "$((gu1 - gu0))" "$((gk1 - gk0))" "$((bu1 - bu0))" "$((bk1 - bk0))" \
        >>"$OUT/cpu.tsv"
}

# Each round runs every case once; the order rotates from round to round, so that drifting
# background load hits all alike.
read -ra vias <<<"$VIAS"
for round in $(seq "$ROUNDS"); do
    n=${#vias[@]}
    for i in $(seq 0 $((n - 1))); do
        via=${vias[$(((i + round - 1) % n))]}
        case $via in
            direct) target=$RULES ;;
            gateway) target=$GW ;;
            baseline) target=$BASE_GW ;;
        esac
        measure "$via" "$round" "$target"
    done
done
# The throughput ratio at saturation: CLOSED clients (closed model), one run of each.
if [ "$CLOSED" -gt 0 ]; then
    for via in "${vias[@]}"; do
        case $via in
            direct) target=$RULES ;;
            gateway) target=$GW ;;
            baseline) target=$BASE_GW ;;
        esac
        measure "$via" closed "$target" --clients "$CLOSED"
    done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import csv, json, os, statistics, sys

out = sys.argv[1]
tick = os.sysconf("SC_CLK_TCK")
machine = open(os.path.join(out, "machine.txt")).read().strip().splitlines()
rows = list(csv.DictReader(open(os.path.join(out, "cpu.tsv")), delimiter="\t"))

def report(name):
    with open(os.path.join(out, f"{name}.json")) as f:
        return json.load(f)

print("# The gateway's hop by CPU at a fixed rate")
print()
for line in machine:
    print(f"- {line}")
print()
print("CPU per call: utime + stime of each process over warm-up and run, divided by the calls "
      "answered (warm-up's included); context switches per call likewise (all threads).")
print()
print("| via | round | load (1 min) | calls answered | ok calls/s | errors | p50 ms | p99 ms | "
      "**gateway µs/call** | **rules service µs/call** | load generator µs/call | "
      "gateway switches/call (vol/invol) | rules switches/call (vol/invol) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
per = {}
closed = {}
for row in rows:
    via, rnd = row["via"], row["round"]
    rep = report(f"{via}-r{rnd}")
    res = rep["result"]
    calls = (res["requests"] - res["errors"]) + rep.get("warmup", {}).get("requests", 0)
    us = lambda s: s * 1e6 / calls if calls else 0.0
    g = us(int(row["gateway_ticks"]) / tick) if via != "direct" else 0.0
    b = us(int(row["backend_ticks"]) / tick)
    l = us(float(row["loadgen_user_s"]) + float(row["loadgen_sys_s"]))
    sw = lambda k: int(row[k]) / calls if calls else 0.0
    split = {k: us(int(row[k]) / tick) for k in ("gateway_user_ticks", "gateway_sys_ticks", "backend_user_ticks", "backend_sys_ticks") if row.get(k) not in (None, "")}
    (closed if rnd == "closed" else per).setdefault(via, []).append({"gateway": g, "backend": b, "loadgen": l, "rate": res["ok_rate"],
                                    "load": float(row["loadavg1"]), **split})
    gsw = f"{sw('gateway_vcsw'):.2f} / {sw('gateway_ivcsw'):.2f}" if via != "direct" else "-"
    print(f"| {via} | {rnd} | {row['loadavg1']} | {calls} | {res['ok_rate']:.0f} | {res['errors']} | "
          f"{res['latency_ms']['p50']:.3f} | {res['latency_ms']['p99']:.3f} | "
          f"{g:.0f} | {b:.0f} | {l:.0f} | {gsw} | "
          f"{sw('backend_vcsw'):.2f} / {sw('backend_ivcsw'):.2f} |")
print()
if "direct" in per:
    m = lambda via, k: statistics.mean(v[k] for v in per[via])
    rng = lambda via, k: f"{min(v[k] for v in per[via]):.0f}-{max(v[k] for v in per[via]):.0f}"
    back_direct = m("direct", "backend")
    loads = [v["load"] for vs in per.values() for v in vs]
    print(f"Load average (1 min) before the runs: {min(loads):.2f}-{max(loads):.2f}.")
    print()
    print("| gateway | gateway µs/call (mean; range) | rules service µs/call direct (mean; range) | "
          "rules service µs/call through it | **gateway / rules service** | "
          "**throughput ratio** (ok calls/s, through it / direct) |")
    print("|---|---:|---:|---:|---:|---:|")
    for via in ("gateway", "baseline"):
        if via not in per:
            continue
        gw = m(via, "gateway")
        print(f"| {via} | **{gw:.0f}** ({rng(via, 'gateway')}) | {back_direct:.0f} ({rng('direct', 'backend')}) | "
              f"{m(via, 'backend'):.0f} | **{gw / back_direct:.2f}** | **{m(via, 'rate') / m('direct', 'rate'):.3f}** |")
    if all("gateway_user_ticks" in v for vs in per.values() for v in vs):
        print()
        print("User space and kernel apart, µs a call (means over the rounds at the fixed rate):")
        print()
        print("| process | via | user | system | total |")
        print("|---|---|---:|---:|---:|")
        for via in per:
            procs = [("rules service", "backend")] + ([("gateway", "gateway")] if via != "direct" else [])
            for label, k in procs:
                u, s_ = m(via, f"{k}_user_ticks"), m(via, f"{k}_sys_ticks")
                name = label if via != "baseline" or k == "backend" else "baseline gateway"
                print(f"| {name} | {via} | {u:.0f} | {s_:.0f} | {u + s_:.0f} |")
    if "baseline" in per and "gateway" in per:
        print()
        print(f"gateway / baseline, CPU per call: **{m('gateway', 'gateway') / m('baseline', 'gateway'):.2f}**")
if "direct" in closed:
    c = lambda via, k: closed[via][0][k]
    print()
    print("Closed model (the `closed` rows above), the throughput ratio at saturation:")
    print()
    print("| gateway | ok calls/s direct | ok calls/s through it | **throughput ratio** | gateway µs/call | rules service µs/call through it |")
    print("|---|---:|---:|---:|---:|---:|")
    for via in ("gateway", "baseline"):
        if via in closed:
            print(f"| {via} | {c('direct', 'rate'):.0f} | {c(via, 'rate'):.0f} | **{c(via, 'rate') / c('direct', 'rate'):.2f}** | "
                  f"{c(via, 'gateway'):.0f} | {c(via, 'backend'):.0f} |")
PY
