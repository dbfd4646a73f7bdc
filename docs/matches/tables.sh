#!/bin/bash
# The engine with our endgame tables (TablePath, every ending up to 4 pieces) against the same
# engine without them: the same binary and evaluation, one thread, 16 MiB hash, a FIXED node
# count per move (go nodes), so the result does not depend on the machine's load. Games start
# from the 6-8-piece positions in docs/matches/endgame-starts.fen (tools/endgame_starts.py), each
# played twice with colours reversed. Resumable: run it again and it carries on after the last
# game in the PGN (the tables are made once; a valid set is reused).
#
#   docs/matches/tables.sh                       # 200 games, 20,000 nodes per move
#   GAMES=400 NODES=50000 TAG=tables50k docs/matches/tables.sh
cd "$(dirname "$0")/../.."
set -e
E=${E:-target/debug/chess-uci}       # chess-search, -nn, -rules, -tablebase are optimised in dev
CHESS=${CHESS:-target/debug/chess}
TABLES=${TABLES:-target/tables}
TAG=${TAG:-tables}
PY=${PY:-python3}                    # a Python with python-chess (pip install chess)
"$CHESS" tb generate --pieces 4 --dir "$TABLES" > "docs/matches/$TAG-generate.log" 2>&1
$PY tools/match.py --engine "$E" --engine-option "TablePath=$TABLES" --opponent "$E" \
    --fens docs/matches/endgame-starts.fen --nodes "${NODES:-20000}" --games "${GAMES:-200}" \
    --pgn "docs/matches/$TAG.pgn" --resume >> "docs/matches/$TAG.log" 2>&1
