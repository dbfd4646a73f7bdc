"""The figures table: printed at the end of a run, written beside its logs, and (with
--write-docs) into docs/faults.md between its table markers."""

import os
import re

BEGIN = "<!-- hosts-table:begin -->"
END = "<!-- hosts-table:end -->"


def _ms(v):
    if v is None:
        return "not recovered"
    return f"{v / 1000:.1f} s" if v >= 1000 else f"{v} ms"


def table(results, command):
    lines = [
        f"`{command}`",
        "",
        "| scenario | calls ok / failed / unknown | available during fault | longest stall (task) "
        "| recovery after healing | p99 during fault | moves acked / unknown (applied, absent) "
        "| watch reconnects | flags (latest seen) | findings |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['scenario']} | | | | | | | | | harness error: {r['error']} |")
            continue
        findings = len(r["findings"])
        lines.append(
            f"| {r['scenario']} | {r['ok']} / {r['failed']} / {r['unknown']} "
            f"| {100 * r['availability']:.1f} % | {_ms(r['stall_ms'])} ({r['stall_worker']}) "
            f"| {_ms(r['recovery_ms'])} | {_ms(r['p99_fault_ms'])} "
            f"| {r['moves_acked']} / {r['moves_unknown_applied'] + r['moves_unknown_absent']} "
            f"({r['moves_unknown_applied']}, {r['moves_unknown_absent']}) "
            f"| {r['watch_reconnects']} | {r['flags']} ({_ms(r['flag_late_max_ms'])}) "
            f"| {findings if findings else 'none'} |"
        )
    return "\n".join(lines) + "\n"


def write_docs(path, text):
    with open(path) as f:
        doc = f.read()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(doc):
        raise RuntimeError(f"{path} has no {BEGIN} ... {END} markers")
    doc = pattern.sub(lambda _: f"{BEGIN}\n{text}{END}", doc)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, path)
