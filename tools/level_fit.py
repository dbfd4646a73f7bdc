#!/usr/bin/env python3
"""Fit the low end of the level curve (`MEASURED` in crates/search/src/level.rs).

Below level 1350 Stockfish has no `UCI_Elo` to play against (its weakest is 1350), so the
weak settings are placed by two kinds of match, both by chess-match at 10 s + 0.1 s:

  --self SETTING:W-L-D   the setting against setting 800 (our engine against itself): its
                         self-play gap g(SETTING), with g(800) = 0;
  --sf SETTING:W-L-D     the setting against Stockfish at UCI_Elo 1350 (--anchor). A setting
                         between two --self settings takes the gap on the straight line
                         between them.

The model: a setting plays at `a + g / k` on Stockfish's scale, where `a` is setting 800's
place and `k` how much self-play stretches a gap. `a` and `k` are those of greatest
likelihood over every --sf game (a draw as half a win and half a loss). Prints the fit, how
much worse other factors explain the games (log-likelihood), and the points.

    python3 tools/level_fit.py \\
        --self 400:14-384-2 500:72-719-9 600:122-658-20 700:114-271-15 \\
               1000:439-138-23 1200:496-79-25 \\
        --sf 800:7-52-1 1000:18-62-0 1200:30-67-3 568:1-97-2 684:6-94-0 634:5-95-0 \\
             725:11-88-1

Standard library only.
"""

from __future__ import annotations

import argparse
import math
import sys


def parse(items: list[str]) -> list[tuple[int, int, int, int]]:
    out = []
    for item in items:
        try:
            setting, wld = item.split(":")
            w, l, d = (int(x) for x in wld.split("-"))
            out.append((int(setting), w, l, d))
        except ValueError:
            sys.exit(f"level_fit.py: {item!r} is not SETTING:W-L-D")
    return out


def elo(w: int, l: int, d: int) -> float:
    score = (w + d / 2) / (w + l + d)
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--self", nargs="+", required=True, dest="self_play")
    ap.add_argument("--sf", nargs="+", required=True)
    ap.add_argument("--anchor", type=float, default=1350.0)
    args = ap.parse_args()

    gaps = {800: 0.0}
    for setting, w, l, d in parse(args.self_play):
        gaps[setting] = elo(w, l, d)
    known = sorted(gaps)

    def gap(setting: int) -> float:
        if setting in gaps:
            return gaps[setting]
        for lo, hi in zip(known, known[1:]):
            if lo < setting < hi:
                return gaps[lo] + (gaps[hi] - gaps[lo]) * (setting - lo) / (hi - lo)
        sys.exit(f"level_fit.py: --sf setting {setting} is outside the --self settings")

    # Each match's gap once, not at every point of the grid.
    sf = [(gap(setting), w, l, d) for setting, w, l, d in parse(args.sf)]

    def loglik(a: float, k: float) -> float:
        total = 0.0
        for g, w, l, d in sf:
            p = 1 / (1 + 10 ** (-(a + g / k - args.anchor) / 400))
            total += (w + d / 2) * math.log(p) + (l + d / 2) * math.log(1 - p)
        return total

    places = [x / 2 for x in range(1000, 2800)]  # 500 .. 1399.5
    factors = [x / 100 for x in range(50, 401)]  # 0.50 .. 4.00
    best = max((loglik(a, k), a, k) for a in places for k in factors)
    ll, a, k = best
    print(f"setting 800 plays at {a:.0f}; self-play gaps divided by {k:.2f} (log-likelihood {ll:.2f})")
    for other in (1.0, 1.2, 1.5, 1.8, 2.2):
        worst = max(loglik(x, other) for x in places) - ll
        print(f"  factor {other:.2f}: log-likelihood {worst:+.2f} against the best")
    print("points (setting, Elo):")
    for setting in known:
        print(f"    ({setting}, {a + gaps[setting] / k:.0f}),")


if __name__ == "__main__":
    main()
