// The one board component of the app, put together from its state (state.ts), input
// (input.ts) and drawing (render.ts): an SVG board with click, drag and keyboard moves,
// legal-move hints, a promotion picker, premoves, flip, last move and check highlighted,
// arrows, and a text field for moves in SAN. It shows what its owner gives it (a FEN and that
// position's legal moves, from the rules service) and reports the move a person makes as UCI;
// the owner sends it to the server and sets the position the server answers with.

import { type Color, type Placement } from "../chess.js";
import { onLang, t } from "../i18n.js";
import { pieceSymbols } from "../pieces.js";
import { attachPointer, sanField } from "./input.js";
import { SIZE, render } from "./render.js";
import { type BoardMove, BoardState, type PositionView } from "./state.js";

export type { BoardMove, PositionView };

let symbolsAdded = false;

export interface BoardOptions {
  /** The SAN field under the board (false: a board only to look at). */
  input?: boolean;
}

export class Board {
  readonly element: HTMLElement;
  readonly state = new BoardState();
  /** Called with the UCI of a move the person makes on the board or types. */
  onMove: ((uci: string) => void) | null = null;
  /** Called when a premove is set (the owner may show it). */
  onPremove: ((uci: string) => void) | null = null;
  readonly svg: SVGSVGElement;
  /** The board and its promotion picker, without the SAN field: an owner may put an
   * evaluation bar beside it, exactly as tall as the board. */
  readonly frame: HTMLElement;
  private readonly picker: HTMLElement;
  private readonly field: ReturnType<typeof sanField> | null;

  constructor(label: string, options: BoardOptions = {}) {
    if (!symbolsAdded) {
      const defs = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      defs.setAttribute("aria-hidden", "true");
      defs.setAttribute("class", "symbols");
      defs.innerHTML = `<defs>${pieceSymbols()}</defs>`;
      document.body.append(defs);
      symbolsAdded = true;
    }
    this.element = document.createElement("div");
    this.element.className = "board";
    this.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    this.svg.setAttribute("viewBox", `0 0 ${8 * SIZE} ${8 * SIZE}`);
    this.svg.setAttribute("role", "grid");
    this.svg.setAttribute("data-board", label);
    attachPointer({
      svg: this.svg,
      state: this.state,
      redraw: () => this.redraw(),
      play: (moves) => this.choose(moves),
      premoved: (uci) => this.onPremove?.(uci),
    });
    this.picker = document.createElement("div");
    this.picker.className = "promotion";
    this.picker.hidden = true;
    this.field = options.input === false ? null : sanField(this.state, (move) => this.emit(move.uci));
    this.frame = document.createElement("div");
    this.frame.className = "board-frame";
    this.frame.append(this.svg, this.picker);
    this.element.append(this.frame);
    if (this.field) this.element.append(this.field.form);
    // The board lives as long as the page: one language listener for its lifetime.
    onLang(() => {
      if (this.field) {
        this.field.input.placeholder = t("moveInput");
        this.field.input.setAttribute("aria-label", t("moveInputLabel"));
      }
      this.svg.setAttribute("aria-label", t("board"));
      this.redraw();
    });
  }

  /** Shows a position. A premove legal there is played at once (through `onMove`). */
  setPosition(fen: string, view: PositionView = {}): void {
    const before: Placement | null = this.state.placement;
    const sameBoard = this.svg.getAttribute("data-fen") === fen;
    const premove = this.state.setPosition(fen, view);
    this.picker.hidden = true;
    this.svg.setAttribute("data-fen", fen);
    if (this.field) {
      this.field.input.disabled = !(view.legal && view.legal.length > 0) && this.state.premoveSide === null;
      // A legal move was made, or the position changed: an old complaint no longer applies.
      if (!sameBoard) this.field.error.textContent = "";
    }
    this.redraw(sameBoard ? null : before);
    if (premove) this.emit(premove.uci);
  }

  /** Lets the person premove when it is not their turn (null: no premoves). */
  setPremoveSide(side: Color | null): void {
    this.state.premoveSide = side;
    if (side === null) this.state.premove = null;
  }

  cancelPremove(): void {
    this.state.premove = null;
    this.redraw();
  }

  setArrows(arrows: string[]): void {
    this.state.arrows = arrows;
    this.redraw();
  }

  get flipped(): boolean {
    return this.state.orientation === "b";
  }

  setOrientation(color: Color): void {
    this.state.orientation = color;
    this.redraw();
  }

  flip(): void {
    this.setOrientation(this.state.orientation === "w" ? "b" : "w");
  }

  private redraw(slideFrom: Placement | null = null): void {
    render(this.svg, this.state, slideFrom);
  }

  private choose(moves: BoardMove[]): void {
    if (moves.length === 1) this.emit(moves[0].uci);
    else this.askPromotion(moves);
  }

  private askPromotion(moves: BoardMove[]): void {
    const color = this.state.placement?.turn ?? "w";
    this.picker.replaceChildren();
    const title = document.createElement("p");
    title.textContent = t("choosePromotion");
    this.picker.append(title);
    for (const [letter, key] of [["q", "queen"], ["r", "rook"], ["b", "bishop"], ["n", "knight"]] as const) {
      const move = moves.find((m) => m.uci.endsWith(letter));
      if (!move) continue;
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.promotion = letter;
      button.setAttribute("aria-label", t(key));
      button.innerHTML = `<svg viewBox="0 0 45 45" aria-hidden="true"><use href="#piece-${color}${letter}"/></svg><span>${t(key)}</span>`;
      button.addEventListener("click", () => this.emit(move.uci));
      this.picker.append(button);
    }
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "×";
    cancel.setAttribute("aria-label", "cancel");
    cancel.addEventListener("click", () => {
      this.picker.hidden = true;
      this.state.selected = -1;
      this.redraw();
    });
    this.picker.append(cancel);
    this.picker.hidden = false;
    this.picker.querySelector("button")?.focus();
  }

  private emit(uci: string): void {
    this.picker.hidden = true;
    const before = this.state.placement;
    // Show the move at once; the owner replaces the position with the server's answer.
    this.state.play(uci);
    if (this.field) this.field.error.textContent = "";
    this.redraw(before);
    this.onMove?.(uci);
  }
}
