#!/usr/bin/env python3
"""Write start positions for the endgame-table match: endgames with 6 to 8 pieces (kings
included), roughly level, one FEN per line.

Measuring tool only (needs python-chess: `pip install chess`). Each position takes a material
set from the list below (both colours of each set, chosen at random), places the pieces at
random (pawns on ranks 2 to 7, a legal position with the side to move at random, neither side
in check), and keeps it when a short search by ENGINE (`go nodes N`) scores it within
--max-cp of level and finds no mate: positions that are decided at once say nothing about the
tables. The same seed and engine give the same file.

    python3 tools/endgame_starts.py --engine target/debug/chess-uci --count 100 \\
        --seed 24 > docs/matches/endgame-starts.fen
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys

import chess
import chess.engine

# Material sets, the first side's pieces then the other's (kings implied): rook, minor-piece,
# queen and pawn endings with 6, 7 or 8 pieces, the kind a game reaches after the middlegame.
MATERIAL = [
    ("RP", "RP"),
    ("RPP", "RP"),
    ("RPP", "RPP"),
    ("RP", "BP"),
    ("RP", "NP"),
    ("R", "BPP"),
    ("BP", "NP"),
    ("BPP", "NPP"),
    ("BPP", "BP"),
    ("NPP", "NP"),
    ("PPP", "PP"),
    ("PPP", "PPP"),
    ("PP", "PP"),
    ("QP", "QP"),
    ("Q", "RPP"),
    ("RB", "RN"),
    ("RN", "RP"),
    ("RBP", "RNP"),
]


def place(rng: random.Random, strong: str, weak: str) -> chess.Board | None:
    """A random legal placement of the two sides' pieces, or None."""
    white_first = rng.random() < 0.5
    pieces = {
        chess.WHITE: strong if white_first else weak,
        chess.BLACK: weak if white_first else strong,
    }
    board = chess.Board(None)
    squares = list(chess.SQUARES)
    rng.shuffle(squares)
    for color in (chess.WHITE, chess.BLACK):
        for letter in "K" + pieces[color]:
            piece = chess.Piece.from_symbol(letter if color == chess.WHITE else letter.lower())
            for i, sq in enumerate(squares):
                if piece.piece_type == chess.PAWN and chess.square_rank(sq) in (0, 7):
                    continue
                board.set_piece_at(sq, piece)
                squares.pop(i)
                break
            else:
                return None
    board.turn = rng.random() < 0.5
    if not board.is_valid() or board.is_check() or board.was_into_check():
        return None
    if board.is_game_over():
        return None
    return board


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="UCI engine that judges the balance")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--nodes", type=int, default=20_000, help="nodes of the balance search")
    ap.add_argument("--max-cp", type=int, default=150, help="keep positions scored within this")
    args = ap.parse_args()
    if args.count < 1 or args.nodes < 1 or args.max_cp < 0:
        sys.exit("--count and --nodes must be at least 1, --max-cp at least 0")
    rng = random.Random(args.seed)
    engine = chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine))
    print(f"# {args.count} endgame start positions, 6-8 pieces: tools/endgame_starts.py "
          f"--count {args.count} --seed {args.seed} --nodes {args.nodes} --max-cp {args.max_cp}")
    kept = tried = 0
    seen = set()
    while kept < args.count:
        tried += 1
        strong, weak = MATERIAL[rng.randrange(len(MATERIAL))]
        board = place(rng, strong, weak)
        if board is None or board.epd() in seen:
            continue
        info = engine.analyse(board, chess.engine.Limit(nodes=args.nodes))
        score = info["score"].relative
        if score.is_mate() or abs(score.score()) > args.max_cp:
            continue
        seen.add(board.epd())
        print(board.fen(), flush=True)
        kept += 1
    engine.quit()
    print(f"{kept} positions kept of {tried} tried", file=sys.stderr)


if __name__ == "__main__":
    main()
