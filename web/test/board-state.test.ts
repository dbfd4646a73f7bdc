import assert from "node:assert/strict";
import { test } from "node:test";
import { squareIndex as sq } from "../src/chess.js";
import { BoardState } from "../src/board/state.js";

const START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const legalStart = [
  { uci: "e2e3", san: "e3" },
  { uci: "e2e4", san: "e4" },
  { uci: "g1f3", san: "Nf3" },
];

test("click a piece, see its targets, click a target to play", () => {
  const s = new BoardState();
  s.setPosition(START, { legal: legalStart });
  assert.deepEqual(s.click(sq("e2")), { kind: "redraw" });
  assert.deepEqual(s.targets().sort(), [sq("e3"), sq("e4")].sort());
  const intent = s.click(sq("e4"));
  assert.equal(intent.kind, "play");
  assert.deepEqual(intent.kind === "play" && intent.moves.map((m) => m.uci), ["e2e4"]);
  // The server says no (the position is set again): a square the piece cannot reach lets
  // go, and another piece takes the selection.
  s.setPosition(START, { legal: legalStart });
  s.click(sq("e2"));
  assert.deepEqual(s.click(sq("e6")), { kind: "redraw" });
  assert.equal(s.selected, -1);
  s.click(sq("e2"));
  s.click(sq("g1"));
  assert.equal(s.selected, sq("g1"));
});

test("a promotion offers every piece", () => {
  const s = new BoardState();
  s.setPosition("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", { legal: ["q", "r", "b", "n"].map((p) => ({ uci: `a7a8${p}`, san: `a8=${p.toUpperCase()}` })) });
  const intent = s.drop(sq("a7"), sq("a8"));
  assert.equal(intent.kind === "play" && intent.moves.length, 4);
});

test("the king's targets include its own rook when it may castle", () => {
  const s = new BoardState();
  s.setPosition("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", { legal: [{ uci: "e1g1", san: "O-O" }, { uci: "e1f1", san: "Kf1" }] });
  s.click(sq("e1"));
  assert.ok(s.targets().includes(sq("h1")));
  assert.ok(!s.targets().includes(sq("a1")));
  const intent = s.click(sq("h1"));
  assert.deepEqual(intent.kind === "play" && intent.moves.map((m) => m.uci), ["e1g1"]);
});

test("a premove is kept while the opponent thinks and played when legal", () => {
  const s = new BoardState();
  s.premoveSide = "w";
  // Black to move: White may premove.
  s.setPosition("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", {});
  assert.deepEqual(s.click(sq("g1")), { kind: "redraw" });
  assert.deepEqual(s.click(sq("f3")), { kind: "premove", uci: "g1f3" });
  const played = s.setPosition("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", { legal: [{ uci: "g1f3", san: "Nf3" }] });
  assert.equal(played?.uci, "g1f3");
  assert.equal(s.premove, null);
  // An illegal premove is dropped.
  s.setPosition("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", {});
  s.drop(sq("f3"), sq("f7"));
  assert.equal(s.setPosition("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", { legal: [{ uci: "f3g5", san: "Ng5" }] }), null);
  // Only one's own pieces can be premoved.
  s.setPosition("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", {});
  assert.deepEqual(s.click(sq("e5")), { kind: "none" });
});

test("the keyboard cursor starts on the king to move and moves as the board is seen", () => {
  const s = new BoardState();
  s.setPosition(START, { legal: legalStart });
  s.moveCursor(0, 1);
  assert.equal(s.cursor, sq("e1"));
  s.moveCursor(0, 1);
  assert.equal(s.cursor, sq("e2"));
  s.orientation = "b";
  s.moveCursor(1, 0);
  assert.equal(s.cursor, sq("d2"), "flipped: right is towards the a-file");
  s.moveCursor(-8, -8);
  assert.equal(s.cursor, sq("h8"));
});

test("squares under a point, both ways round", () => {
  const s = new BoardState();
  assert.equal(s.squareAt(0.01, 0.99), sq("a1"));
  assert.equal(s.squareAt(0.99, 0.01), sq("h8"));
  s.orientation = "b";
  assert.equal(s.squareAt(0.01, 0.99), sq("h8"));
  assert.equal(s.squareAt(1.2, 0.5), -1);
});
