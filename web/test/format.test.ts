import assert from "node:assert/strict";
import { test } from "node:test";
import { barText, clockText, depthText, scoreCp, scoreText, whiteShare } from "../src/format.js";

const cp = (value: number) => ({ value: { case: "centipawns" as const, value } });
const mate = (value: number) => ({ value: { case: "mateIn" as const, value } });

test("clocks: m:ss, h:mm:ss, tenths under ten seconds, never negative", () => {
  assert.equal(clockText(300_000), "5:00");
  assert.equal(clockText(61_999), "1:01");
  assert.equal(clockText(3_725_000), "1:02:05");
  assert.equal(clockText(9_960), "9.9");
  assert.equal(clockText(-50), "0.0");
});

test("scores are written from White's side; a side already mated has no number", () => {
  assert.equal(scoreText(cp(35), true), "+0.35");
  assert.equal(scoreText(cp(35), false), "-0.35");
  assert.equal(scoreText(mate(2), false), "#-2");
  assert.equal(scoreText(mate(-3), false), "#3");
  assert.equal(scoreText(mate(0), true), "#");
  assert.equal(scoreCp(mate(0), true), -1000, "White to move and mated");
  assert.equal(scoreCp(mate(0), false), 1000);
  assert.equal(barText(cp(-212), true), "-2.1");
  assert.equal(barText(mate(3), true), "M3");
  assert.equal(barText(mate(3), false), "-M3");
});

test("the bar follows the WDL, and mates fill it", () => {
  assert.equal(whiteShare(cp(0), { win: 500, draw: 0, loss: 500 }, true), 50);
  assert.equal(whiteShare(cp(0), { win: 800, draw: 200, loss: 0 }, false), 10);
  assert.equal(whiteShare(mate(2), undefined, true), 100);
  assert.equal(whiteShare(mate(2), undefined, false), 0);
});

test("the selective depth is shown only when it goes deeper than the depth", () => {
  assert.equal(depthText(20, 4), "20");
  assert.equal(depthText(20, 20), "20");
  assert.equal(depthText(20, 31), "20/31");
});

test("table lines: who mates in how many moves, or a draw", async () => {
  const { tableMate } = await import("../src/format.js");
  assert.deepEqual(tableMate(53, true), { white: true, moves: 27 });
  assert.deepEqual(tableMate(-52, true), { white: false, moves: 26 });
  assert.deepEqual(tableMate(1, false), { white: false, moves: 1 });
  assert.equal(tableMate(undefined, true), null);
  assert.equal(tableMate(0, false), null);
});
