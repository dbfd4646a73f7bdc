#!/bin/sh
# Engine speed next to Stockfish's, in the same run: each engine's own `bench`, alternated
# ROUNDS times (default 3), with the nodes/second of each round and their ratio.
#
#   cargo build --release -p chess-uci && tools/bench-vs-stockfish.sh [ROUNDS]
#
# Needs Debian's `stockfish` (apt-get install stockfish). Measuring tool only.
set -eu
rounds=${1:-3}
ours=${CHESS_UCI:-target/release/chess-uci}
sf=${STOCKFISH:-$(command -v stockfish || echo /usr/games/stockfish)}
[ -x "$ours" ] || { echo "no $ours: run cargo build --release -p chess-uci" >&2; exit 2; }
[ -x "$sf" ] || { echo "no stockfish: apt-get install stockfish" >&2; exit 2; }
echo "round  ours_nodes ours_nps  stockfish_nodes stockfish_nps  ratio"
i=1
while [ "$i" -le "$rounds" ]; do
    o=$("$ours" bench 2>&1)
    s=$("$sf" bench 2>&1)
    on=$(echo "$o" | sed -n 's/^Nodes searched: *//p')
    onps=$(echo "$o" | sed -n 's/^Nodes\/second: *//p')
    sn=$(echo "$s" | sed -n 's/^Nodes searched *: *//p')
    snps=$(echo "$s" | sed -n 's/^Nodes\/second *: *//p')
    ratio=$(awk -v a="$onps" -v b="$snps" 'BEGIN { printf "%.2f", a / b }')
    echo "$i  $on $onps  $sn $snps  $ratio"
    i=$((i + 1))
done
