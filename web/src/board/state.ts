// The board's state, apart from input and drawing (chessground's split): the position drawn,
// its legal moves (from the rules service), the selection, the keyboard cursor, the last move,
// arrows, orientation and a premove. Pure (no DOM): input.ts turns pointer and key events into
// calls here, render.ts draws it, and the unit tests drive it directly.

import { type BoardMove, type Color, type Placement, applyUci, kingSquare, movesBetween, readFen, squareName } from "../chess.js";

export type { BoardMove };

export interface PositionView {
  legal?: BoardMove[];
  lastMove?: string;
  check?: boolean;
  arrows?: string[];
}

/** What a click, drop or key asks for: nothing, a redraw, moves to play (several: a
 * promotion to choose), or a premove set. */
export type Intent = { kind: "none" } | { kind: "redraw" } | { kind: "play"; moves: BoardMove[] } | { kind: "premove"; uci: string };

export class BoardState {
  fen = "";
  placement: Placement | null = null;
  legal: BoardMove[] = [];
  lastMove: string | undefined;
  check = false;
  arrows: string[] = [];
  orientation: Color = "w";
  selected = -1;
  /** The keyboard cursor (a square index), or -1 before the board was focused. */
  cursor = -1;
  /** The side the person plays when premoves are allowed (null: no premoves). */
  premoveSide: Color | null = null;
  premove: string | null = null;

  /** Shows a position; returns the premove to play now, if one was set and is legal here. */
  setPosition(fen: string, view: PositionView = {}): BoardMove | null {
    this.fen = fen;
    this.placement = readFen(fen);
    this.legal = view.legal ?? [];
    this.lastMove = view.lastMove;
    this.check = view.check ?? false;
    this.arrows = view.arrows ?? [];
    this.selected = -1;
    const premove = this.premove;
    if (premove && this.legal.length > 0) {
      this.premove = null;
      const from = squareIndexOf(premove.slice(0, 2));
      const to = squareIndexOf(premove.slice(2, 4));
      const moves = movesBetween(this.placement, this.legal, from, to);
      // A premoved promotion becomes a queen (as on every board that premoves).
      return moves.find((m) => m.uci.length === 4 || m.uci.endsWith("q")) ?? null;
    }
    return null;
  }

  /** Whether the person may pick up a piece now (their move, or a premove). */
  private canPremove(): boolean {
    return this.premoveSide !== null && this.legal.length === 0 && this.placement !== null && this.placement.turn !== this.premoveSide;
  }

  movesFrom(square: number): BoardMove[] {
    const name = squareName(square);
    return this.legal.filter((m) => m.uci.startsWith(name));
  }

  /** The squares the selected piece can go to (for premoves: any square but its own). */
  targets(): number[] {
    if (this.selected < 0) return [];
    if (this.canPremove()) return [];
    const out = new Set<number>();
    for (const m of this.movesFrom(this.selected)) out.add(squareIndexOf(m.uci.slice(2, 4)));
    // A king may also be dropped on its own rook to castle.
    for (const m of this.movesFrom(this.selected)) {
      if (/^O-O/.test(m.san.replace(/0/g, "O")) && this.placement) {
        const rank = Math.floor(this.selected / 8);
        const kingSide = !m.san.replace(/0/g, "O").startsWith("O-O-O");
        for (let f = kingSide ? 7 : 0; kingSide ? f > this.selected % 8 : f < this.selected % 8; f += kingSide ? -1 : 1) {
          const p = this.placement.pieces[rank * 8 + f];
          if (p?.type === "r" && p.color === this.placement.pieces[this.selected]?.color) {
            out.add(rank * 8 + f);
            break;
          }
        }
      }
    }
    return [...out];
  }

  private ownPiece(square: number): boolean {
    const piece = this.placement?.pieces[square];
    return !!piece && piece.color === this.premoveSide;
  }

  /** A click (or Enter on the cursor) on a square. */
  click(square: number): Intent {
    if (this.selected >= 0 && square !== this.selected) {
      const intent = this.drop(this.selected, square);
      if (intent.kind !== "none") return intent;
    }
    if (square === this.selected) {
      this.selected = -1;
      return { kind: "redraw" };
    }
    if (this.movesFrom(square).length > 0 || (this.canPremove() && this.ownPiece(square))) {
      this.selected = square;
      return { kind: "redraw" };
    }
    if (this.selected >= 0 || this.premove) {
      this.selected = -1;
      this.premove = null;
      return { kind: "redraw" };
    }
    return { kind: "none" };
  }

  /** A piece dragged from `from` and dropped on `to`. */
  drop(from: number, to: number): Intent {
    if (from === to) return { kind: "none" };
    if (this.canPremove()) {
      if (!this.ownPiece(from)) return { kind: "none" };
      this.premove = squareName(from) + squareName(to);
      this.selected = -1;
      return { kind: "premove", uci: this.premove };
    }
    const moves = movesBetween(this.placement, this.legal, from, to);
    if (moves.length === 0) return { kind: "none" };
    return { kind: "play", moves };
  }

  /** Shows a move at once, before the server answers: the piece moves and the board waits. */
  play(uci: string): void {
    if (this.placement) this.placement = applyUci(this.placement, uci);
    this.legal = [];
    this.selected = -1;
    this.lastMove = uci;
    this.check = false;
    this.arrows = [];
  }

  /** Moves the keyboard cursor by files and ranks as the board is seen (up is away from the
   * person); the cursor starts on the side-to-move's king. */
  moveCursor(dx: number, dy: number): void {
    if (this.cursor < 0) {
      this.cursor = this.placement ? Math.max(0, kingSquare(this.placement, this.placement.turn)) : 0;
      return;
    }
    const sign = this.orientation === "w" ? 1 : -1;
    const file = Math.min(7, Math.max(0, (this.cursor % 8) + dx * sign));
    const rank = Math.min(7, Math.max(0, Math.floor(this.cursor / 8) + dy * sign));
    this.cursor = rank * 8 + file;
  }

  checkedKing(): number {
    return this.check && this.placement ? kingSquare(this.placement, this.placement.turn) : -1;
  }

  /** The top-left corner of a square in board units of `size` per square. */
  corner(square: number, size: number): [number, number] {
    const file = square % 8;
    const rank = Math.floor(square / 8);
    return this.orientation === "w" ? [file * size, (7 - rank) * size] : [(7 - file) * size, rank * size];
  }

  /** The square under a point given as fractions (0..1) of the board's width and height. */
  squareAt(fx: number, fy: number): number {
    const col = Math.floor(fx * 8);
    const row = Math.floor(fy * 8);
    if (col < 0 || col > 7 || row < 0 || row > 7) return -1;
    return this.orientation === "w" ? (7 - row) * 8 + col : row * 8 + (7 - col);
  }
}

function squareIndexOf(name: string): number {
  return (name.charCodeAt(1) - 49) * 8 + (name.charCodeAt(0) - 97);
}
