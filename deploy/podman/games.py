#!/usr/bin/env python3
"""Games through the deployed gateway with the `chess` CLI, and a check that every
acknowledged move is still there.

    games.py create STATE --games N          N new games
    games.py play STATE --plies K [--pause S]
        K more plies in every game, round robin; a move counts as acknowledged when the CLI
        exits 0. A failed call is not retried blindly: the game is read back, and a move the
        server made although the call failed (outcome unknown) counts as made, not acknowledged
    games.py verify STATE                    every game read back holds every acknowledged move

All games play the same line (the Closed Ruy Lopez, Chigorin), so the expected moves of a
game are that line's first plies. The CLI finds the gateway in CHESS_SERVER and the key in
CHESS_API_KEY; CHESS_CLI names the binary. STATE is a JSON file.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

LINE = (
    "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Na5 Bc2 c5 "
    "d4 Qc7 Nbd2 cxd4 cxd4 Nc6 Nb3 a5 Be3 a4"
).split()


def chess(*args, timeout=40):
    cli = os.environ.get("CHESS_CLI", "chess")
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout)


def moves_of(game_id):
    """The game's moves in SAN, from its PGN; None (and the error on stderr) when it cannot be
    read."""
    r = chess("game", "show", game_id, "--pgn")
    if r.returncode != 0:
        print(f"  reading {game_id}: {r.stderr.strip()}", file=sys.stderr)
        return None
    text = re.sub(r"\[[^\]]*\]|\{[^}]*\}", " ", r.stdout)
    return [t for t in text.split() if not re.fullmatch(r"\d+\.+|1-0|0-1|1/2-1/2|\*", t)]


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, state):
    with open(path + ".tmp", "w") as f:
        json.dump(state, f, indent=1)
    os.replace(path + ".tmp", path)


def create(args):
    state = {"games": [], "failed_calls": 0, "unknown_outcomes": 0}
    for i in range(args.games):
        r = chess("game", "new", "--white", f"smoke-{i}-white", "--black", f"smoke-{i}-black")
        if r.returncode != 0:
            sys.exit(f"games.py: game new failed: {r.stderr.strip()}")
        state["games"].append({"id": r.stdout.splitlines()[0].strip(), "acked": 0, "made": 0})
    save(args.state, state)
    return 0


def play(args):
    state = load(args.state)
    target = {g["id"]: min(g["made"] + args.plies, len(LINE)) for g in state["games"]}
    # Failures in a row, per game: a restart costs a few; this many means something is wrong.
    streak = {g["id"]: 0 for g in state["games"]}
    while any(g["made"] < target[g["id"]] for g in state["games"]):
        for g in state["games"]:
            if g["made"] >= target[g["id"]]:
                continue
            ply = g["made"]
            r = chess("game", "move", g["id"], LINE[ply], "--expect-ply", str(ply))
            if r.returncode == 0:
                g["made"] = g["acked"] = ply + 1
                streak[g["id"]] = 0
            else:
                state["failed_calls"] += 1
                streak[g["id"]] += 1
                if streak[g["id"]] > 20:
                    save(args.state, state)
                    sys.exit(f"games.py: {g['id']}: 20 failed moves in a row: {r.stderr.strip()}")
                print(f"  move {ply + 1} of {g['id']}: {r.stderr.strip()}", file=sys.stderr)
                moves = moves_of(g["id"])
                if moves is not None and len(moves) > ply:
                    # Made although the call failed: the outcome was unknown to the client.
                    state["unknown_outcomes"] += 1
                    g["made"] = len(moves)
            save(args.state, state)
            time.sleep(args.pause)
    return 0


def verify(args):
    state = load(args.state)
    bad = 0
    acked = 0
    for g in state["games"]:
        moves = moves_of(g["id"])
        acked += g["acked"]
        if moves is None:
            print(f"  {g['id']}: cannot be read", file=sys.stderr)
            bad += 1
        elif moves != LINE[: len(moves)] or len(moves) < g["acked"]:
            print(f"  {g['id']}: {len(moves)} moves {moves}, {g['acked']} acknowledged", file=sys.stderr)
            bad += 1
    print(
        f"  {len(state['games'])} games, {acked} acknowledged moves: "
        f"{'all there' if not bad else f'{bad} games wrong'} "
        f"({state['failed_calls']} failed calls, {state['unknown_outcomes']} made with an unknown outcome)",
        file=sys.stderr,
    )
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("create")
    c.add_argument("state")
    c.add_argument("--games", type=int, required=True)
    p = sub.add_parser("play")
    p.add_argument("state")
    p.add_argument("--plies", type=int, required=True)
    p.add_argument("--pause", type=float, default=0.0)
    v = sub.add_parser("verify")
    v.add_argument("state")
    args = parser.parse_args()
    return {"create": create, "play": play, "verify": verify}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
