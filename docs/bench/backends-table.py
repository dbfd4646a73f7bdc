#!/usr/bin/env python3
"""Prints the summary table of docs/bench/backends.sh from its reports: DIR/header.md,
DIR/labels.tsv (run name, backend label, clients) and DIR/<run>.json (chess-loadgen)."""
import json
import sys
from pathlib import Path

out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/bench/backends")
print((out / "header.md").read_text().rstrip())
print()
print("| backend | clients | analyses/s | nodes/s | p50 ms | p99 ms | errors | mean batch |")
print("|---|---|---|---|---|---|---|---|")
for line in (out / "labels.tsv").read_text().splitlines():
    name, label, clients = line.split("\t")
    report = json.loads((out / f"{name}.json").read_text())
    r = report["result"]
    counters = {}
    for server in report.get("server") or []:
        counters.update(server.get("counters") or {})
    total = sum(v for k, v in counters.items() if k.startswith("chess_search_eval_batch_size_sum"))
    batches = sum(v for k, v in counters.items() if k.startswith("chess_search_eval_batch_size_count"))
    mean = f"{total / batches:.1f}" if batches else "-"
    lat, eng = r["latency_ms"], r.get("engine") or {}
    errors = ", ".join(f"{n} {c}" for c, n in r["codes"].items() if c != "OK") or "0"
    print(
        f"| {label} | {clients} | {r['ok_rate']:.2f} | {eng.get('nodes_per_s', 0):.0f} | "
        f"{lat['p50']:.0f} | {lat['p99']:.0f} | {errors} | {mean} |"
    )
