#!/usr/bin/env bash
# The rating ladder of issue 25: our engine (default network) against Debian's engines at
# 10 s + 0.1 s, one thread and 16 MiB hash each, game pairs with colours swapped over
# chess-match's built-in book of 50 openings (so 50 pairs play every opening from both sides).
#
#   cargo build --release -p chess-uci -p chess-match
#   apt-get install stockfish ethereal-chess toga2
#   docs/matches/ladder.sh ethereal stockfish     # the named rungs, one match each, in parallel
#
# Rungs: sf2500, sf2850 (Stockfish 15.1 with UCI_LimitStrength and that UCI_Elo), toga
# (Toga II 3.0), ethereal (Ethereal 12), stockfish (Stockfish 15.1 at full strength), and the
# calibration of the levels: levelN (N from 800 to 3000) plays our engine at level N
# (UCI_LimitStrength, UCI_Elo N: the BestMove level N of the API) against Stockfish at
# UCI_Elo N (N from 1350 to 2850), so a level's score says how far it is from its number;
# levelN@E plays level N against Stockfish at UCI_Elo E (to measure a level far from its
# number where a match against its own number would end 0 or 100 %); settingS@E plays the
# uncalibrated setting S (chess-uci's LevelSetting) against UCI_Elo E, as the calibration does;
# selfS plays setting S against setting 800 of the same engine (below Stockfish's weakest
# UCI_Elo, 1350, the low settings are placed by these matches: tools/level_fit.py). A levelled
# move is a fixed node budget, so self rungs may run beside other work (only slower).
# Settings: PAIRS (default 50) per rung, CONCURRENCY (default 1) games at once in a rung (2
# for one rung alone on two cores), OUT (default target/ladder) for the PGN, the
# checkpoint and the log of each rung, ENGINE (default target/release/chess-uci).
# A rung already begun resumes from its checkpoint; every match writes its last line (score,
# Elo with its 95 % interval, forfeits, load average) to OUT/<rung>.log.
#
# Clock matches measure strength only on an otherwise idle machine: run at most one rung per
# core, and nothing else beside them.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-50}
CONCURRENCY=${CONCURRENCY:-1}
OUT=${OUT:-target/ladder}
ENGINE=${ENGINE:-target/release/chess-uci}
MATCH=${MATCH:-target/release/chess-match}
mkdir -p "$OUT"
[[ -x "$ENGINE" && -x "$MATCH" ]] || {
    echo "ladder.sh: build first: cargo build --release -p chess-uci -p chess-match" >&2
    exit 1
}
(($#)) || {
    echo "usage: ladder.sh RUNG... (sf2500 sf2850 toga ethereal stockfish levelN levelN@E settingS@E selfS)" >&2
    exit 2
}

rung() { # NAME: prints the opponent's command line and options, one per line
    case "$1" in
    sf2500 | sf2850)
        echo /usr/games/stockfish
        echo UCI_LimitStrength=true
        echo "UCI_Elo=${1#sf}"
        ;;
    level[0-9]* | setting[0-9]*@[0-9]*)
        local level=${1#level}
        level=${level#setting}
        echo /usr/games/stockfish
        echo UCI_LimitStrength=true
        echo "UCI_Elo=${level#*@}"
        ;;
    self[0-9]*)
        echo "$ENGINE"
        echo UCI_LimitStrength=true
        echo LevelSetting=800
        ;;
    stockfish) echo /usr/games/stockfish ;;
    ethereal) echo /usr/games/ethereal-chess ;;
    toga) echo /usr/games/toga2 ;;
    *)
        echo "ladder.sh: unknown rung $1" >&2
        return 1
        ;;
    esac
}

pids=()
for name in "$@"; do
    mapfile -t spec < <(rung "$name")
    ((${#spec[@]})) || exit 2
    [[ -x "${spec[0]}" ]] || {
        echo "ladder.sh: ${spec[0]} missing: apt-get install stockfish ethereal-chess toga2" >&2
        exit 1
    }
    args=(--engine "$ENGINE" --opponent "${spec[0]}" --tc 10+0.1 --pairs "$PAIRS" --concurrency "$CONCURRENCY"
        --engine-option Hash=16 --engine-option Threads=1
        --opponent-option Hash=16 --opponent-option Threads=1
        --pgn "$OUT/$name.pgn" --state "$OUT/$name.json")
    for opt in "${spec[@]:1}"; do
        args+=(--opponent-option "$opt")
    done
    if [[ $name == level* ]]; then
        level=${name#level}
        args+=(--engine-option UCI_LimitStrength=true --engine-option "UCI_Elo=${level%@*}")
    elif [[ $name == setting* ]]; then
        setting=${name#setting}
        args+=(--engine-option UCI_LimitStrength=true --engine-option "LevelSetting=${setting%@*}")
    elif [[ $name == self* ]]; then
        args+=(--engine-option UCI_LimitStrength=true --engine-option "LevelSetting=${name#self}")
    fi
    [[ -f "$OUT/$name.json" ]] && args+=(--resume)
    echo "ladder.sh: $name -> $OUT/$name.log"
    "$MATCH" "${args[@]}" >>"$OUT/$name.log" 2>&1 &
    pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
    wait "$pid" || status=1
done
for name in "$@"; do
    echo "$name: $(tail -n 1 "$OUT/$name.log")"
done
exit $status
