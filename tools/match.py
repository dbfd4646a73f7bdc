#!/usr/bin/env python3
"""Play a match between two UCI engines and report the score and Elo difference.

Measuring tool only (needs python-chess: `pip install chess`); nothing in the product uses it.

Games are played one at a time with alternating colours over a varied opening set (each
opening is played twice, once with each engine as white), under an increment time control
kept by this script: an engine that overruns its clock loses. Results are written as PGN.

Example:

    python3 tools/match.py --engine target/release/chess-uci \\
        --opponent /usr/games/stockfish --opponent-option UCI_LimitStrength=true \\
        --opponent-option UCI_Elo=2000 --games 20 --tc 10+0.1 --pgn match.pgn

With `--fens FILE` the games start from the positions in FILE (one FEN per line, each played
twice, once with each engine on the side to move) instead of the openings; with `--nodes N`
every move is searched for N nodes (UCI `go nodes N`) instead of on a clock, so the result does
not depend on the machine's load. The endgame-table match of docs/endgames.md:

    python3 tools/match.py --engine target/release/chess-uci \\
        --engine-option TablePath=tables --opponent target/release/chess-uci \\
        --fens docs/matches/endgame-starts.fen --nodes 20000 --games 200 \\
        --pgn tables-match.pgn --resume
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import random
import shlex
import sys
import time

import chess
import chess.engine
import chess.pgn

# Short opening lines in UCI notation: open, semi-open, closed and flank games.
OPENINGS = [
    "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6",  # Ruy Lopez
    "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6",  # Sicilian Najdorf
    "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6",  # Queen's Gambit Declined
    "d2d4 g8f6 c2c4 g7g6 b1c3 f8g7 e2e4 d7d6",  # King's Indian
    "e2e4 e7e6 d2d4 d7d5 b1c3 f8b4",  # French Winawer
    "e2e4 c7c6 d2d4 d7d5 e4e5 c8f5",  # Caro-Kann Advance
    "c2c4 e7e5 b1c3 g8f6 g2g3 d7d5",  # English, reversed Sicilian
    "d2d4 g8f6 c2c4 e7e6 g1f3 b7b6",  # Queen's Indian
    "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 c2c3 g8f6",  # Giuoco Piano
    "g1f3 d7d5 g2g3 g8f6 f1g2 c7c6 e1g1 c8g4",  # Reti / King's Indian Attack
    "d2d4 d7d5 c2c4 c7c6 g1f3 g8f6 b1c3 d5c4",  # Slav
    "e2e4 d7d6 d2d4 g8f6 b1c3 g7g6",  # Pirc
    "e2e4 c7c5 b1c3 b8c6 g2g3 g7g6 f1g2 f8g7",
    "e2e4 c7c5 g1f3 e7e6 d2d4 c5d4 f3d4 b8c6",
    "e2e4 c7c5 g1f3 b8c6 d2d4 c5d4 f3d4 g7g6",
    "e2e4 c7c5 c2c3 g8f6 e4e5 f6d5",
    "e2e4 e7e5 g1f3 g8f6 f3e5 d7d6 e5f3 f6e4",
    "e2e4 e7e5 g1f3 b8c6 d2d4 e5d4 f3d4 g8f6",
    "e2e4 e7e5 f2f4 e5f4 g1f3 g7g5",
    "e2e4 e7e5 b1c3 g8f6 g2g3 d7d5",
    "e2e4 e7e5 g1f3 b8c6 f1b5 g8f6 e1g1 f6e4",
    "e2e4 d7d5 e4d5 d8d5 b1c3 d5a5",
    "e2e4 g8f6 e4e5 f6d5 d2d4 d7d6",
    "e2e4 g7g6 d2d4 f8g7 b1c3 d7d6",
    "e2e4 e7e6 d2d4 d7d5 b1d2 c7c5",
    "e2e4 e7e6 d2d4 d7d5 e4e5 c7c5 c2c3 b8c6",
    "e2e4 c7c6 d2d4 d7d5 b1c3 d5e4 c3e4 c8f5",
    "d2d4 d7d5 c2c4 d5c4 g1f3 g8f6 e2e3 e7e6",
    "d2d4 d7d5 c2c4 e7e6 b1c3 c7c5",
    "d2d4 d7d5 c2c4 b8c6 b1c3 d5c4",
    "d2d4 g8f6 c2c4 e7e6 b1c3 f8b4",
    "d2d4 g8f6 c2c4 g7g6 b1c3 d7d5",
    "d2d4 g8f6 c2c4 c7c5 d4d5 b7b5",
    "d2d4 g8f6 c2c4 c7c5 d4d5 e7e6 b1c3 e6d5 c4d5 d7d6",
    "d2d4 f7f5 g2g3 g8f6 f1g2 g7g6",
    "d2d4 g8f6 c2c4 e7e6 g2g3 d7d5 f1g2",
    "d2d4 g8f6 g1f3 e7e6 c1g5 c7c5",
    "d2d4 d7d5 c1f4 g8f6 e2e3 c7c5",
    "d2d4 g8f6 c2c4 e7e5 d4e5 f6g4",
    "c2c4 c7c5 b1c3 b8c6 g2g3 g7g6 f1g2 f8g7",
    "c2c4 g8f6 b1c3 e7e6 e2e4 d7d5",
    "g1f3 g8f6 c2c4 b7b6 g2g3 c8b7 f1g2",
    "b2b3 e7e5 c1b2 b8c6 e2e3 g8f6",
    "f2f4 d7d5 g1f3 g8f6 e2e3 g7g6",
    "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 f3g5 d7d5",
    "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 g7g6",
    "e2e4 c7c5 g1f3 e7e6 d2d4 c5d4 f3d4 a7a6",
    "d2d4 g8f6 c2c4 e7e6 g1f3 d7d5 b1c3 f8e7 c1f4",
    "e2e4 d7d6 d2d4 g8f6 b1c3 e7e5",
    "g2g3 d7d5 f1g2 e7e5 d2d3 g8f6",
]


def parse_tc(text: str) -> tuple[float, float]:
    base, _, inc = text.partition("+")
    return float(base), float(inc or 0)


def parse_options(items: list[str]) -> dict[str, str]:
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            sys.exit(f"option {item!r} is not NAME=VALUE")
        options[name] = value
    return options


def open_engine(command: str, options: dict[str, str], protocol: str = "uci") -> chess.engine.SimpleEngine:
    argv = shlex.split(command)
    if protocol == "xboard":
        engine = chess.engine.SimpleEngine.popen_xboard(argv)
    else:
        engine = chess.engine.SimpleEngine.popen_uci(argv)
    opts = {"Threads": 1, "Hash": 16}
    opts.update(options)
    engine.configure({k: v for k, v in opts.items() if k in engine.options})
    return engine


def play_game(engines, names, opening, tc, game_id, max_plies=400, nodes=None, fen=None):
    """engines/names are indexed by colour (True = white). Returns the PGN game. `fen`: the
    start position (else the standard one); `nodes`: a fixed node count per move instead of
    the clock."""
    base, inc = tc
    board = chess.Board(fen) if fen else chess.Board()
    for uci in opening.split():
        board.push_uci(uci)
    game = chess.pgn.Game()
    if fen:
        game.setup(chess.Board(fen))
    game.headers["White"] = names[chess.WHITE]
    game.headers["Black"] = names[chess.BLACK]
    game.headers["Date"] = datetime.date.today().strftime("%Y.%m.%d")
    game.headers["TimeControl"] = f"{base:g}+{inc:g}" if nodes is None else f"nodes {nodes}"
    node = game
    for move in board.move_stack:
        node = node.add_variation(move)
    clock = {chess.WHITE: base, chess.BLACK: base}
    result, reason = None, None
    while result is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, reason = outcome.result(), outcome.termination.name.lower()
            break
        if len(board.move_stack) >= max_plies:
            result, reason = "1/2-1/2", "move limit"
            break
        side = board.turn
        if nodes is not None:
            limit = chess.engine.Limit(nodes=nodes)
        else:
            limit = chess.engine.Limit(
                white_clock=clock[chess.WHITE],
                black_clock=clock[chess.BLACK],
                white_inc=inc,
                black_inc=inc,
            )
        start = time.monotonic()
        try:
            # A new game id makes python-chess send ucinewgame first.
            played = engines[side].play(board, limit, game=game_id, info=chess.engine.INFO_SCORE)
        except chess.engine.EngineError as err:
            result = "0-1" if side == chess.WHITE else "1-0"
            reason = f"engine error: {err}"
            break
        used = time.monotonic() - start
        clock[side] -= used
        if nodes is None and clock[side] < 0:
            result = "0-1" if side == chess.WHITE else "1-0"
            reason = "time forfeit"
            break
        clock[side] += inc
        if played.move is None or played.move not in board.legal_moves:
            result = "0-1" if side == chess.WHITE else "1-0"
            reason = f"illegal move {played.move}"
            break
        node = node.add_variation(played.move)
        score = played.info.get("score")
        if score is not None:
            node.comment = f"{score.white()} {used:.2f}s"
        board.push(played.move)
    game.headers["Result"] = result
    game.headers["Termination"] = reason
    return game


def extend(opening: str, plies: int, seed: int, pair: int) -> str:
    """`opening` followed by `plies` random legal moves that do not end the game."""
    if plies <= 0:
        return opening
    rng = random.Random(seed * 1_000_003 + pair)
    for _ in range(100):
        board = chess.Board()
        for uci in opening.split():
            board.push_uci(uci)
        extra = []
        for _ in range(plies):
            moves = sorted(m.uci() for m in board.legal_moves)
            if not moves:
                break
            m = rng.choice(moves)
            extra.append(m)
            board.push_uci(m)
        if len(extra) == plies and not board.is_game_over():
            return " ".join([opening, *extra])
    return opening


def elo(score: float) -> float:
    score = min(max(score, 1e-3), 1 - 1e-3)
    return -400 * math.log10(1 / score - 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="the engine under test")
    ap.add_argument("--opponent", required=True)
    ap.add_argument("--engine-option", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--opponent-option", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--tc", default="10+0.1", help="seconds+increment per game (default 10+0.1)")
    ap.add_argument("--pgn", default="match.pgn")
    ap.add_argument(
        "--opponent-protocol", choices=["uci", "xboard"], default="uci", help="how to talk to the opponent"
    )
    ap.add_argument(
        "--resume", action="store_true", help="keep the games already in --pgn and play the rest"
    )
    ap.add_argument(
        "--random-plies",
        type=int,
        default=0,
        help="extend each opening by this many random legal plies, the same for both games of "
        "a pair (seeded by --seed and the pair): more distinct openings for long matches",
    )
    ap.add_argument("--seed", type=int, default=1, help="seed of --random-plies")
    ap.add_argument(
        "--fens",
        metavar="FILE",
        help="start from these positions (one FEN per line, blank lines and # comments "
        "skipped), each played twice with colours reversed, instead of the openings",
    )
    ap.add_argument(
        "--nodes",
        type=int,
        help="search this many nodes per move (go nodes N) instead of playing on a clock",
    )
    args = ap.parse_args()
    fens = None
    if args.fens:
        with open(args.fens) as f:
            fens = [line.strip() for line in f if line.strip() and not line.startswith("#")]
        for n, fen in enumerate(fens, 1):
            try:
                board = chess.Board(fen)
            except ValueError as err:
                sys.exit(f"{args.fens}:{n}: {fen!r} is not a FEN: {err}")
            if not board.is_valid():
                sys.exit(f"{args.fens}:{n}: {fen!r} is not a legal position ({board.status()!r})")
        if not fens:
            sys.exit(f"{args.fens}: no positions")
    if args.nodes is not None and args.nodes < 1:
        sys.exit(f"--nodes {args.nodes}: must be at least 1")

    tc = parse_tc(args.tc)
    eng = open_engine(args.engine, parse_options(args.engine_option))
    opp = open_engine(args.opponent, parse_options(args.opponent_option), args.opponent_protocol)
    eng_name = eng.id.get("name", args.engine)
    opp_name = opp.id.get("name", args.opponent)
    if args.engine_option and eng_name == opp_name:
        eng_name += " (" + ", ".join(args.engine_option) + ")"
    if args.opponent_option:
        opp_name += " (" + ", ".join(args.opponent_option) + ")"
    points = []  # from the engine under test's side: 1, 0.5, 0
    wins = draws = losses = 0
    if args.resume and os.path.exists(args.pgn):
        # Checkpoint: every finished game is in the PGN; count them and carry on after the last.
        with open(args.pgn) as old:
            while (game := chess.pgn.read_game(old)) is not None:
                engine_white = len(points) % 2 == 0
                result = game.headers.get("Result", "*")
                if result == "1/2-1/2":
                    points.append(0.5)
                    draws += 1
                elif result in ("1-0", "0-1"):
                    won = (result == "1-0") == engine_white
                    points.append(1.0 if won else 0.0)
                    wins += won
                    losses += not won
        print(f"resuming after {len(points)} games: +{wins} -{losses} ={draws}", flush=True)
    with open(args.pgn, "a" if args.resume else "w") as pgn:
        for i in range(len(points), args.games):
            if fens:
                fen, opening = fens[(i // 2) % len(fens)], ""
            else:
                fen = None
                opening = extend(OPENINGS[(i // 2) % len(OPENINGS)], args.random_plies, args.seed, i // 2)
            engine_white = i % 2 == 0
            engines = {chess.WHITE: eng if engine_white else opp, chess.BLACK: opp if engine_white else eng}
            names = {chess.WHITE: eng_name if engine_white else opp_name, chess.BLACK: opp_name if engine_white else eng_name}
            game = play_game(engines, names, opening, tc, game_id=i, nodes=args.nodes, fen=fen)
            game.headers["Event"] = "match.py"
            game.headers["Round"] = str(i + 1)
            print(game, file=pgn, end="\n\n", flush=True)
            result = game.headers["Result"]
            if result == "1/2-1/2":
                p = 0.5
                draws += 1
            elif (result == "1-0") == engine_white:
                p = 1.0
                wins += 1
            else:
                p = 0.0
                losses += 1
            points.append(p)
            n = len(points)
            mean = sum(points) / n
            print(
                f"game {n:>3}: {names[chess.WHITE]} - {names[chess.BLACK]} {result} "
                f"({game.headers['Termination']}, {len(list(game.mainline_moves()))} plies)  "
                f"score {wins}-{losses}-{draws} ({mean:.3f})",
                flush=True,
            )
    eng.quit()
    opp.quit()
    n = len(points)
    mean = sum(points) / n
    var = sum((p - mean) ** 2 for p in points) / max(n - 1, 1)
    se = math.sqrt(var / n)
    lo, hi = mean - 1.96 * se, mean + 1.96 * se
    print(f"\n{eng_name} vs {opp_name}: +{wins} -{losses} ={draws} in {n} games")
    print(f"score {mean:.3f}; Elo difference {elo(mean):+.0f} (95% interval {elo(lo):+.0f} .. {elo(hi):+.0f})")


if __name__ == "__main__":
    main()
