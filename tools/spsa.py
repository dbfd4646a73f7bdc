#!/usr/bin/env python3
"""SPSA tuning of the search's parameters with chess-match.

Each iteration perturbs every parameter by +c or -c at random (simultaneous perturbation),
plays a few game pairs of the + engine against the - engine (`tune.<param>` UCI options,
`--tc nodes=N`, random opening plies), and moves every parameter by
`a_k / c_k * (wins - losses) * sign`: the gradient estimate of the match score. The gains
follow the usual schedule (a_k = a / (A + k + 1)^0.602, c_k = c / (k + 1)^0.101), set so that
the last iteration's perturbation is `c_end` and its step `r_end * c_end^2` per game point.

The state (the parameters and the iteration) is written after every iteration to --state, and
a rerun carries on from it, so a run can be stopped and resumed. Standard library only.

    tools/spsa.py --params tools/spsa-params.txt --iterations 1000 --state spsa.json
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ALPHA = 0.602
GAMMA = 0.101
RESULT = re.compile(r"(\d+) games \(\+(\d+) -(\d+) =(\d+)\)")


def read_params(path):
    """Lines of `name value min max c_end [int|float]`; `#` starts a comment."""
    params = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) != 6 or line[5] not in ("int", "float"):
                sys.exit(f"{path}:{n}: expected `name value min max c_end int|float`, got {line}")
            name, value, lo, hi, c_end = line[0], *map(float, line[1:5])
            if not lo <= value <= hi or c_end <= 0:
                sys.exit(f"{path}:{n}: {name}: value outside [{lo}, {hi}] or c_end <= 0")
            params.append(
                {"name": name, "value": value, "min": lo, "max": hi, "c_end": c_end,
                 "int": line[5] == "int"}
            )
    return params


def clamp(p, v):
    return min(max(v, p["min"]), p["max"])


def shown(p, v):
    return str(int(round(v))) if p["int"] else f"{v:.4f}"


def play(args, plus, minus, seed):
    """Wins, losses, draws of the + engine against the - engine."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [args.match, "--engine", args.engine, "--opponent", args.engine,
               "--tc", f"nodes={args.nodes}", "--pairs", str(args.pairs),
               "--concurrency", str(args.concurrency), "--random-plies", str(args.random_plies),
               "--seed", str(seed), "--pgn", os.path.join(tmp, "games.pgn"),
               "--state", os.path.join(tmp, "state.json")]
        for flag, values in (("--engine-option", plus), ("--opponent-option", minus)):
            for name, value in values:
                cmd += [flag, f"tune.{name}={value}"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        found = RESULT.findall(out.stdout + out.stderr)
        if out.returncode != 0 or not found:
            sys.exit(f"chess-match failed ({out.returncode}):\n{out.stderr[-2000:]}")
        _, w, l, d = map(int, found[-1])
        return w, l, d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", required=True)
    ap.add_argument("--iterations", type=int, required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--engine", default="target/release/chess-uci")
    ap.add_argument("--match", default="target/release/chess-match")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--pairs", type=int, default=4, help="game pairs per iteration")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--random-plies", type=int, default=4)
    ap.add_argument("--r-end", type=float, default=0.002)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    params = read_params(args.params)
    state = {"k": 0, "theta": {p["name"]: p["value"] for p in params}, "games": [0, 0, 0]}
    if os.path.exists(args.state):
        with open(args.state, encoding="utf-8") as f:
            state = json.load(f)
        if sorted(state["theta"]) != sorted(p["name"] for p in params):
            sys.exit(f"{args.state} tunes other parameters than {args.params}")
        print(f"resuming at iteration {state['k']}", flush=True)

    n = args.iterations
    big_a = 0.1 * n
    rng = random.Random(args.seed)
    for _ in range(state["k"] * len(params)):  # the same signs as an unbroken run
        rng.random()
    while state["k"] < n:
        k = state["k"]
        plus, minus, signs = [], [], []
        for p in params:
            c = p["c_end"] * n ** GAMMA / (k + 1) ** GAMMA
            sign = 1 if rng.random() < 0.5 else -1
            theta = state["theta"][p["name"]]
            plus.append((p["name"], shown(p, clamp(p, theta + c * sign))))
            minus.append((p["name"], shown(p, clamp(p, theta - c * sign))))
            signs.append((p, c, sign))
        started = time.time()
        w, l, d = play(args, plus, minus, args.seed * 1_000_003 + k)
        result = w - l
        for p, c, sign in signs:
            a = args.r_end * p["c_end"] ** 2 * (big_a + n) ** ALPHA
            step = a / (big_a + k + 1) ** ALPHA / c * result * sign
            theta = state["theta"][p["name"]] + step
            state["theta"][p["name"]] = clamp(p, theta)
        state["k"] = k + 1
        state["games"] = [x + y for x, y in zip(state["games"], (w, l, d))]
        tmp = args.state + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, args.state)
        values = " ".join(f"{p['name']}={shown(p, state['theta'][p['name']])}" for p in params)
        print(f"iteration {k + 1}/{n}: +{w} -{l} ={d} ({time.time() - started:.1f} s); {values}",
              flush=True)
    print("final: " + " ".join(
        f"tune.{p['name']}={shown(p, state['theta'][p['name']])}" for p in params))


if __name__ == "__main__":
    main()
