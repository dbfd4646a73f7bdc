// The piece drawings: original shapes made of simple paths in a 45x45 box.

import type { PieceType } from "./chess.js";

interface Shape {
  body: string;
  /** Details drawn in the contrasting colour (eye, slit). */
  detail?: string;
  circles?: Array<[number, number, number]>;
}

const SHAPES: Record<PieceType, Shape> = {
  p: {
    body: "M17 20h11l3 14H14z M11 34h23v5H11z",
    circles: [[22.5, 14, 5.5]],
  },
  r: {
    body: "M10 34h25v5H10z M14 17h17v17H14z M12 17V7h4v3h4V7h5v3h4V7h4v10z",
    detail: "M14 17h17",
  },
  n: {
    body: "M14 39h18v-5c0-8-3-12-1-20-3-5-9-7-13-5l-2-3-1 4c-3 3-5 7-6 11l3 2 5-3c1 3-3 7-3 14z",
    detail: "M17.5 13.5h1",
  },
  b: {
    body: "M11 35h23v4H11z M15 35c0-7 2-11 4-13-4-3-4-9 3.5-14 7.5 5 7.5 11 3.5 14 2 2 4 6 4 13z",
    detail: "M24 12l-3 5",
    circles: [[22.5, 6, 2.3]],
  },
  q: {
    body: "M10 35h25v4H10z M11 35L8 14l6.5 11 1-14L20 23l2.5-15L25 23l4.5-12 1 14L37 14l-3 21z",
    circles: [
      [8, 13, 2.2],
      [15.5, 10, 2.2],
      [22.5, 7, 2.2],
      [29.5, 10, 2.2],
      [37, 13, 2.2],
    ],
  },
  k: {
    body:
      "M10 35h25v4H10z M12 35c-2-7-4-13 0-16s8 0 10.5 4c2.5-4 6.5-7 10.5-4s2 9 0 16z M21 4h3v11h-3z M17.5 7h10v3h-10z",
    detail: "M12 30h21",
  },
};

/** `<symbol>` definitions for all twelve pieces, ids `piece-wk` ... `piece-bp`. */
export function pieceSymbols(): string {
  let out = "";
  for (const color of ["w", "b"] as const) {
    const fill = color === "w" ? "#fafafa" : "#2a2a2a";
    const stroke = color === "w" ? "#1b1b1b" : "#050505";
    const detail = color === "w" ? "#1b1b1b" : "#e8e8e8";
    for (const [type, shape] of Object.entries(SHAPES)) {
      out += `<symbol id="piece-${color}${type}" viewBox="0 0 45 45">`;
      out += `<path d="${shape.body}" fill="${fill}" stroke="${stroke}" stroke-width="1.5" stroke-linejoin="round"/>`;
      for (const [cx, cy, r] of shape.circles ?? []) {
        out += `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${fill}" stroke="${stroke}" stroke-width="1.5"/>`;
      }
      if (shape.detail) {
        out += `<path d="${shape.detail}" fill="none" stroke="${detail}" stroke-width="1.5" stroke-linecap="round"/>`;
      }
      out += "</symbol>";
    }
  }
  return out;
}
