import assert from "node:assert/strict";
import { test } from "node:test";
import { START_FEN, applyUci, matchTyped, moveNumberText, moveRows, movesBetween, phaseOf, readFen, sanKey, squareIndex } from "../src/chess.js";

test("move rows are numbered from the position's move number, two plies a row", () => {
  const rows = moveRows("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 16", ["Qb8+", "Nxb8", "Rd8#"]);
  assert.deepEqual(
    rows.map((r) => [r.number, r.white?.san ?? null, r.black?.san ?? null]),
    [
      [16, "Qb8+", "Nxb8"],
      [17, "Rd8#", null],
    ],
  );
  assert.deepEqual(moveRows(START_FEN, ["e4", "e5", "Nf3"]).map((r) => r.number), [1, 2]);
  assert.equal(rows[1].white?.ply, 3);
});

test("a list that starts with Black leaves White's first cell empty", () => {
  const rows = moveRows("8/8/8/8/8/8/8/K6k b - - 0 10", ["Kg2", "Kb1", "Kg3"]);
  assert.deepEqual(
    rows.map((r) => [r.number, r.white?.san ?? null, r.black?.san ?? null]),
    [
      [10, null, "Kg2"],
      [11, "Kb1", "Kg3"],
    ],
  );
  assert.equal(moveNumberText("8/8/8/8/8/8/8/K6k b - - 0 10", 1), "10…");
  assert.equal(moveNumberText("8/8/8/8/8/8/8/K6k b - - 0 10", 2), "11.");
  assert.equal(moveNumberText(START_FEN, 20), "10…");
});

test("typed moves match in English, with Chinese piece names, and as UCI", () => {
  const legal = [
    { uci: "b1c3", san: "Nc3" },
    { uci: "e1f1", san: "Kf1" },
    { uci: "e1g1", san: "O-O" },
    { uci: "e7e8q", san: "e8=Q+" },
  ];
  assert.equal(matchTyped(legal, "马c3")?.uci, "b1c3");
  assert.equal(matchTyped(legal, "王f1")?.uci, "e1f1");
  assert.equal(matchTyped(legal, "Nc3")?.uci, "b1c3");
  assert.equal(matchTyped(legal, "0-0")?.uci, "e1g1");
  assert.equal(matchTyped(legal, "e8=后")?.uci, "e7e8q");
  assert.equal(matchTyped(legal, "b1c3")?.uci, "b1c3");
  assert.equal(matchTyped(legal, "Nd4"), null);
  assert.equal(sanKey("马xc3+"), "Nc3");
});

test("a king dropped on its own rook castles on that side", () => {
  const fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
  const placement = readFen(fen);
  const legal = [
    { uci: "e1g1", san: "O-O" },
    { uci: "e1c1", san: "O-O-O" },
    { uci: "e1f1", san: "Kf1" },
    { uci: "h1h8", san: "Rxh8+" },
  ];
  assert.deepEqual(movesBetween(placement, legal, squareIndex("e1"), squareIndex("h1")).map((m) => m.uci), ["e1g1"]);
  assert.deepEqual(movesBetween(placement, legal, squareIndex("e1"), squareIndex("a1")).map((m) => m.uci), ["e1c1"]);
  // No castling right left: nothing.
  assert.deepEqual(movesBetween(placement, legal.slice(2), squareIndex("e1"), squareIndex("h1")), []);
  // A rook is not a king.
  assert.deepEqual(movesBetween(placement, legal, squareIndex("h1"), squareIndex("e1")), []);
});

test("a move shown before the server answers moves the rook when castling, and takes en passant", () => {
  const castled = applyUci(readFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")!, "e1g1");
  assert.equal(castled.pieces[squareIndex("g1")]?.type, "k");
  assert.equal(castled.pieces[squareIndex("f1")]?.type, "r");
  assert.equal(castled.pieces[squareIndex("h1")], null);
  assert.equal(castled.turn, "b");
  const chess960 = applyUci(readFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")!, "e1a1");
  assert.equal(chess960.pieces[squareIndex("c1")]?.type, "k");
  assert.equal(chess960.pieces[squareIndex("d1")]?.type, "r");
  const ep = applyUci(readFen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")!, "e5d6");
  assert.equal(ep.pieces[squareIndex("d5")], null);
  assert.equal(ep.pieces[squareIndex("d6")]?.type, "p");
  const promoted = applyUci(readFen("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")!, "a7a8n");
  assert.equal(promoted.pieces[squareIndex("a8")]?.type, "n");
});

test("phases: the opening, the middlegame, the endgame", () => {
  assert.equal(phaseOf(START_FEN), "opening");
  assert.equal(phaseOf("r1bq1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R1BQ1RK1 w - - 0 20"), "middlegame");
  assert.equal(phaseOf("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 40"), "endgame");
  assert.equal(phaseOf("2r3k1/5ppp/4b3/8/8/4B3/5PPP/2R3K1 w - - 0 30"), "endgame");
});
