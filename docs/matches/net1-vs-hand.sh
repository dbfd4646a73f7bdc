#!/bin/bash
# The trained network against the hand-written evaluation: the same engine binary, 10s+0.1s,
# one thread, 16 MiB hash. Two halves of 100 games run at once (one per core): A plays the
# 50 book openings with both colours, B the same openings each extended by 2 seeded random plies.
cd "$(dirname "$0")/../.."
NET=${NET:-docs/matches/chnn-f64ce5341a0d.nnue}
TAG=${TAG:-net1}
E=${E:-target/release/chess-uci}
python3 tools/match.py --engine $E --engine-option EvalFile=$NET --opponent $E --opponent-option EvalFile=hand \
    --games ${GAMES:-100} --tc 10+0.1 --pgn docs/matches/$TAG-a.pgn --resume > docs/matches/$TAG-a.log 2>&1 &
python3 tools/match.py --engine $E --engine-option EvalFile=$NET --opponent $E --opponent-option EvalFile=hand \
    --games ${GAMES:-100} --tc 10+0.1 --pgn docs/matches/$TAG-b.pgn --random-plies 2 --seed 7 --resume > docs/matches/$TAG-b.log 2>&1 &
wait
