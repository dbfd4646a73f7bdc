#!/usr/bin/env python3
"""How each engine of a chess-match PGN spent its clock: time, depth and speed by phase.

chess-match writes what an engine said of each of its moves as a comment after the move,
`{+0.35/12 0.412s, 812345 nodes}` (score / depth, seconds by the runner's clock, the last
node count the engine reported). This reads one or more such PGNs and prints, for each
engine (the White/Black tag) and each phase of the game (by full-move number), the moves,
the mean and median seconds a move, the mean depth and the nodes a second; then each
engine's mean seconds a game. Opening moves (from the book) have no comment and are not
counted. Under a clock control it answers "does one engine use more of its time than the
other, and when"; under any control, how deep and how fast each searched.

    python3 tools/match_time.py target/ladder-s70/stockfish.pgn

Standard library only.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import defaultdict

PHASES = [(1, 10), (11, 20), (21, 40), (41, 60), (61, 10_000)]
TAG = re.compile(r'^\[(\w+) "(.*)"\]$')
# A move number (`12.` or `12...`), a comment, or a result: everything else is a move.
TOKEN = re.compile(r"\{[^}]*\}|\d+\.(?:\.\.)?|\S+")
COMMENT = re.compile(
    r"^\{(?:(?P<score>[+-](?:M\d+|\d+\.\d+))(?:/(?P<depth>\d+))? )?"
    r"(?P<secs>\d+(?:\.\d+)?)s(?:, (?P<nodes>\d+) nodes)?\}$"
)
RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}


def games(text: str):
    """Yields (tags, movetext) for each game."""
    tags: dict[str, str] = {}
    moves: list[str] = []
    for line in text.splitlines():
        m = TAG.match(line.strip())
        if m:
            if moves:
                yield tags, " ".join(moves)
                tags, moves = {}, []
            tags[m.group(1)] = m.group(2)
        elif line.strip():
            moves.append(line.strip())
    if moves:
        yield tags, " ".join(moves)


def searches(tags: dict[str, str], movetext: str):
    """Yields (engine, full-move number, seconds, depth or None, nodes or None) for each
    commented move."""
    side, number = "White", 1
    fen = tags.get("FEN")
    if fen:
        fields = fen.split()
        side = "Black" if len(fields) > 1 and fields[1] == "b" else "White"
        number = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    last = None  # the side and number of the move just read, until its comment
    for tok in TOKEN.findall(movetext):
        if tok.startswith("{"):
            c = COMMENT.match(tok)
            if c and last:
                engine = tags.get(last[0], last[0])
                depth = int(c["depth"]) if c["depth"] else None
                nodes = int(c["nodes"]) if c["nodes"] else None
                yield engine, last[1], float(c["secs"]), depth, nodes
            last = None
        elif re.fullmatch(r"\d+\.(?:\.\.)?", tok):
            number = int(tok.rstrip("."))
            side = "Black" if tok.endswith("...") else "White"
        elif tok in RESULTS:
            break
        else:
            last = (side, number)
            if side == "Black":
                number += 1
            side = "Black" if side == "White" else "White"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pgn", nargs="+", help="chess-match PGN files")
    args = ap.parse_args()
    rows: dict[tuple[str, int], list[tuple[float, int | None, int | None]]] = defaultdict(list)
    per_game: dict[str, list[float]] = defaultdict(list)
    count = 0
    for path in args.pgn:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            print(f"match_time.py: {path}: {e.strerror}", file=sys.stderr)
            return 1
        for tags, movetext in games(text):
            count += 1
            used: dict[str, float] = defaultdict(float)
            for engine, number, secs, depth, nodes in searches(tags, movetext):
                phase = next(i for i, (a, b) in enumerate(PHASES) if a <= number <= b)
                rows[(engine, phase)].append((secs, depth, nodes))
                used[engine] += secs
            for engine, secs in used.items():
                per_game[engine].append(secs)
    if not rows:
        print(f"match_time.py: no commented moves in {count} games", file=sys.stderr)
        return 1
    print(f"{count} games")
    print(f"{'engine':<40} {'moves':>9} {'n':>6} {'mean s':>8} {'median s':>9} {'depth':>6} {'knodes/s':>9}")
    for engine in sorted({e for e, _ in rows}):
        for i, (a, b) in enumerate(PHASES):
            r = rows.get((engine, i))
            if not r:
                continue
            secs = [s for s, _, _ in r]
            depths = [d for _, d, _ in r if d is not None]
            speed = [n / s for s, _, n in r if n is not None and s >= 0.05]
            span = f"{a}-{b}" if b < 10_000 else f"{a}+"
            print(
                f"{engine[:40]:<40} {span:>9} {len(r):>6} {statistics.mean(secs):>8.3f} "
                f"{statistics.median(secs):>9.3f} "
                f"{(statistics.mean(depths) if depths else float('nan')):>6.1f} "
                f"{(statistics.median(speed) / 1000 if speed else float('nan')):>9.0f}"
            )
        g = per_game[engine]
        print(f"{engine[:40]:<40} a game: {statistics.mean(g):.2f} s in {len(g)} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
