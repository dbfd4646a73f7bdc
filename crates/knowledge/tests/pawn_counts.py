#!/usr/bin/env python3
"""Independent count of doubled, isolated and passed pawns with python-chess.

Reads lines `FEN<TAB>wd wi wp bd bi bp` (the counts chess-knowledge gave: white doubled,
isolated, passed, then black's) from the file named by the first argument, counts the same
three things with python-chess by the issue's definitions, and prints the agreement per count.
Exits 1 when any count differs (the first differences are printed), 2 on bad input.

  doubled  = every pawn on a file where its side has two or more
  isolated = no own pawn on a neighbouring file
  passed   = no enemy pawn ahead of it on its own or a neighbouring file
"""
import sys

import chess

NAMES = ["white doubled", "white isolated", "white passed",
         "black doubled", "black isolated", "black passed"]


def counts(board, color):
    ours = board.pieces(chess.PAWN, color)
    theirs = board.pieces(chess.PAWN, not color)
    doubled = isolated = passed = 0
    for sq in ours:
        f, r = chess.square_file(sq), chess.square_rank(sq)
        same_file = [s for s in ours if chess.square_file(s) == f]
        if len(same_file) >= 2:
            doubled += 1
        if not any(abs(chess.square_file(s) - f) == 1 for s in ours):
            isolated += 1
        if color == chess.WHITE:
            ahead = [s for s in theirs if chess.square_rank(s) > r]
        else:
            ahead = [s for s in theirs if chess.square_rank(s) < r]
        if not any(abs(chess.square_file(s) - f) <= 1 for s in ahead):
            passed += 1
    return [doubled, isolated, passed]


def main():
    if len(sys.argv) != 2:
        print("usage: pawn_counts.py FILE", file=sys.stderr)
        return 2
    agree = [0] * 6
    totals = [0] * 6
    positions = 0
    mismatched = 0
    shown = 0
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            fen, _, ours = line.partition("\t")
            ours = [int(x) for x in ours.split()]
            if len(ours) != 6:
                print(f"bad line: {line!r}", file=sys.stderr)
                return 2
            board = chess.Board(fen)
            theirs = counts(board, chess.WHITE) + counts(board, chess.BLACK)
            positions += 1
            if ours != theirs:
                mismatched += 1
                if shown < 10:
                    shown += 1
                    print(f"MISMATCH {fen}: chess-knowledge {ours}, python-chess {theirs}")
            for i in range(6):
                totals[i] += theirs[i]
                agree[i] += ours[i] == theirs[i]
    print(f"python-chess {chess.__version__}: {positions} positions, "
          f"{positions - mismatched} agree on all six counts, {mismatched} differ")
    for i, name in enumerate(NAMES):
        print(f"  {name}: {agree[i]}/{positions} positions agree, {totals[i]} pawns in all")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
