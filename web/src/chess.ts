// Small position helpers for drawing: the page never decides legality itself (it asks the
// rules service through the gateway); it only reads FEN's piece placement and side to move.

export type Color = "w" | "b";
export type PieceType = "k" | "q" | "r" | "b" | "n" | "p";
export interface Piece {
  color: Color;
  type: PieceType;
}

export const START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/** Square index 0..63: a1 = 0, h1 = 7, a8 = 56. */
export function squareName(index: number): string {
  return "abcdefgh"[index % 8] + String(Math.floor(index / 8) + 1);
}

export function squareIndex(name: string): number {
  return (name.charCodeAt(1) - 49) * 8 + (name.charCodeAt(0) - 97);
}

export interface Placement {
  pieces: Array<Piece | null>;
  turn: Color;
}

/** Piece placement and side to move of a FEN; `null` when the FEN cannot be drawn. */
export function readFen(fen: string): Placement | null {
  const fields = fen.trim().split(/\s+/);
  const rows = fields[0]?.split("/") ?? [];
  if (rows.length !== 8) return null;
  const pieces: Array<Piece | null> = new Array(64).fill(null);
  for (let r = 0; r < 8; r++) {
    let file = 0;
    for (const c of rows[r]) {
      if (/[1-8]/.test(c)) {
        file += Number(c);
      } else if (/[kqrbnpKQRBNP]/.test(c) && file < 8) {
        const color: Color = c === c.toUpperCase() ? "w" : "b";
        pieces[(7 - r) * 8 + file] = { color, type: c.toLowerCase() as PieceType };
        file++;
      } else {
        return null;
      }
    }
    if (file !== 8) return null;
  }
  return { pieces, turn: fields[1] === "b" ? "b" : "w" };
}

/** The square of `color`'s king, or -1. */
export function kingSquare(placement: Placement, color: Color): number {
  return placement.pieces.findIndex((p) => p?.type === "k" && p.color === color);
}

/** SAN compared leniently: without check marks, annotation glyphs, `x` and `=`; `0-0` as `O-O`. */
export function sanKey(san: string): string {
  return san.trim().replace(/0/g, "O").replace(/[+#!?x=:-]/g, "");
}

/** Whether the text looks like FEN rather than moves or PGN. */
export function looksLikeFen(text: string): boolean {
  return /^[1-8kqrbnpKQRBNP]+(\/[1-8kqrbnpKQRBNP]+){7}(\s|$)/.test(text.trim());
}

/** Formats milliseconds as m:ss (or h:mm:ss), tenths under ten seconds. */
export function clockText(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) return (clamped / 1000).toFixed(1);
  const total = Math.floor(clamped / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}
