// Small position helpers for drawing: the page never decides legality itself (it asks the
// rules service through the gateway); it only reads FEN's piece placement and side to move,
// and matches what a person does against the legal moves the server sent. Pure: no DOM, so
// the unit tests (web/test) run it under Node.

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

/** Chinese piece names (as the move lists write them in Chinese) to SAN letters. */
const CHINESE_PIECES: Record<string, string> = { 王: "K", 后: "Q", 车: "R", 車: "R", 象: "B", 马: "N", 馬: "N", 兵: "" };

/** SAN compared leniently: Chinese piece names as letters, without check marks, annotation
 * glyphs, `x` and `=`; `0-0` as `O-O`. */
export function sanKey(san: string): string {
  return san
    .trim()
    .replace(/[王后车車象马馬兵]/g, (c) => CHINESE_PIECES[c] ?? c)
    .replace(/0/g, "O")
    .replace(/[+#!?x×=:\s-]/g, "");
}

/** A legal move as the server sends it. */
export interface BoardMove {
  uci: string;
  san: string;
}

/** The legal move a person typed (SAN in English or with Chinese piece names, or UCI). */
export function matchTyped(legal: readonly BoardMove[], text: string): BoardMove | null {
  const key = sanKey(text);
  if (!key) return null;
  const uci = text.trim().toLowerCase();
  return legal.find((m) => sanKey(m.san) === key || m.uci === uci) ?? null;
}

/** The legal moves that take the piece on `from` to `to`: more than one for a promotion.
 * A king dropped on its own rook castles on that side (the rook's square in Chess960 UCI,
 * or the king's castling square in standard UCI). */
export function movesBetween(placement: Placement | null, legal: readonly BoardMove[], from: number, to: number): BoardMove[] {
  const prefix = squareName(from) + squareName(to);
  const direct = legal.filter((m) => m.uci.startsWith(prefix));
  if (direct.length > 0 || !placement) return direct;
  const king = placement.pieces[from];
  const rook = placement.pieces[to];
  if (king?.type !== "k" || rook?.type !== "r" || rook.color !== king.color) return [];
  if (Math.floor(from / 8) !== Math.floor(to / 8)) return [];
  const kingSide = to % 8 > from % 8;
  return legal.filter((m) => /^O-O(-O)?/.test(m.san.replace(/0/g, "O")) && m.uci.startsWith(squareName(from)) && (m.san.replace(/0/g, "O").startsWith("O-O-O") ? !kingSide : kingSide));
}

/** The placement after a move, drawn at once while the server confirms it: castling moves
 * the rook too (standard or king-takes-rook UCI), en passant removes the pawn, promotion
 * changes the piece. */
export function applyUci(placement: Placement, uci: string): Placement {
  const pieces = placement.pieces.slice();
  const from = squareIndex(uci.slice(0, 2));
  const to = squareIndex(uci.slice(2, 4));
  const piece = pieces[from];
  if (!piece) return { pieces, turn: placement.turn };
  const target = pieces[to];
  const rank = Math.floor(from / 8);
  if (piece.type === "k" && target?.type === "r" && target.color === piece.color) {
    // King takes own rook: castling written the Chess960 way.
    const kingSide = to > from;
    pieces[from] = null;
    pieces[to] = null;
    pieces[rank * 8 + (kingSide ? 6 : 2)] = piece;
    pieces[rank * 8 + (kingSide ? 5 : 3)] = target;
  } else if (piece.type === "k" && Math.abs(to - from) === 2) {
    const kingSide = to > from;
    const rookFrom = rank * 8 + (kingSide ? 7 : 0);
    pieces[rank * 8 + (kingSide ? 5 : 3)] = pieces[rookFrom];
    pieces[rookFrom] = null;
    pieces[from] = null;
    pieces[to] = piece;
  } else {
    if (piece.type === "p" && from % 8 !== to % 8 && !target) pieces[Math.floor(from / 8) * 8 + (to % 8)] = null;
    pieces[from] = null;
    const promotion = uci[4] as PieceType | undefined;
    pieces[to] = promotion ? { color: piece.color, type: promotion } : piece;
  }
  return { pieces, turn: placement.turn === "w" ? "b" : "w" };
}

/** Whether the text looks like FEN rather than moves or PGN. */
export function looksLikeFen(text: string): boolean {
  return /^[1-8kqrbnpKQRBNP]+(\/[1-8kqrbnpKQRBNP]+){7}(\s|$)/.test(text.trim());
}

/** One row of a move list: a move number with White's and Black's moves (ply is 1-based from
 * the list's start; a list that starts with Black has no White move in its first row). */
export interface MoveRow {
  number: number;
  white: { ply: number; san: string } | null;
  black: { ply: number; san: string } | null;
}

/** The moves grouped per move number, numbered from the start position's move number. */
export function moveRows(startFen: string, sans: readonly string[]): MoveRow[] {
  const fields = startFen.trim().split(/\s+/);
  const blackFirst = fields[1] === "b";
  let number = Math.max(1, Number.parseInt(fields[5] ?? "1", 10) || 1);
  const rows: MoveRow[] = [];
  let i = 0;
  if (blackFirst && sans.length > 0) {
    rows.push({ number, white: null, black: { ply: 1, san: sans[0] } });
    i = 1;
    number++;
  }
  for (; i < sans.length; i += 2, number++) {
    rows.push({
      number,
      white: { ply: i + 1, san: sans[i] },
      black: i + 1 < sans.length ? { ply: i + 2, san: sans[i + 1] } : null,
    });
  }
  return rows;
}

/** `16.` for White's move, `16…` for Black's, at ply `ply` (1-based) of a list from `startFen`. */
export function moveNumberText(startFen: string, ply: number): string {
  const fields = startFen.trim().split(/\s+/);
  const offset = fields[1] === "b" ? 1 : 0;
  const start = Math.max(1, Number.parseInt(fields[5] ?? "1", 10) || 1);
  const index = ply - 1 + offset;
  return `${start + Math.floor(index / 2)}${index % 2 === 0 ? "." : "…"}`;
}

export type Phase = "opening" | "middlegame" | "endgame";

/** The phase of a position: endgame when little material is left (queens off with at most
 * a rook and a minor piece each, or at most 13 points of pieces besides pawns and kings on
 * the board), opening in the first 12 moves while most pieces are on, else middlegame. */
export function phaseOf(fen: string): Phase {
  const placement = readFen(fen);
  if (!placement) return "middlegame";
  const values: Record<PieceType, number> = { k: 0, p: 0, n: 3, b: 3, r: 5, q: 9 };
  let material = 0;
  let queens = 0;
  for (const p of placement.pieces) {
    if (!p) continue;
    material += values[p.type];
    if (p.type === "q") queens++;
  }
  if (material <= 13 || (queens === 0 && material <= 16)) return "endgame";
  const fullmove = Number.parseInt(fen.trim().split(/\s+/)[5] ?? "1", 10) || 1;
  return fullmove <= 12 && material >= 54 ? "opening" : "middlegame";
}
