// The one board component of the app: an SVG board with click and drag moves, legal-move hints,
// a promotion picker, flip, last move and check highlighted, coordinates, arrows, and a text
// field for moves in SAN. It shows what its owner gives it (a FEN and that position's legal
// moves, from the rules service) and reports the move a person makes as UCI; the owner sends it
// to the server and sets the position the server answers with.

import { type Color, type Placement, kingSquare, readFen, sanKey, squareIndex, squareName } from "./chess.js";
import { onLang, t } from "./i18n.js";
import { pieceSymbols } from "./pieces.js";

export interface BoardMove {
  uci: string;
  san: string;
}

export interface PositionView {
  legal?: BoardMove[];
  lastMove?: string;
  check?: boolean;
  arrows?: string[];
}

const SVG = "http://www.w3.org/2000/svg";
const SIZE = 100;
let symbolsAdded = false;

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

export class Board {
  readonly element: HTMLElement;
  /** Called with the UCI of a move the person makes on the board or types. */
  onMove: ((uci: string) => void) | null = null;
  private readonly svg: SVGSVGElement;
  private readonly picker: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly inputError: HTMLElement;
  private placement: Placement | null = null;
  private view: PositionView = {};
  private orientation: Color = "w";
  private selected = -1;
  private drag: { from: number; x: number; y: number; moved: boolean; node: SVGElement | null } | null = null;

  constructor(label: string) {
    if (!symbolsAdded) {
      const defs = document.createElementNS(SVG, "svg");
      defs.setAttribute("aria-hidden", "true");
      defs.setAttribute("class", "symbols");
      defs.innerHTML = `<defs>${pieceSymbols()}</defs>`;
      document.body.append(defs);
      symbolsAdded = true;
    }
    this.element = document.createElement("div");
    this.element.className = "board";
    this.svg = el("svg", { viewBox: `0 0 ${8 * SIZE} ${8 * SIZE}`, role: "img", "data-board": label });
    this.svg.addEventListener("pointerdown", (e) => this.pointerDown(e));
    this.svg.addEventListener("pointermove", (e) => this.pointerMove(e));
    this.svg.addEventListener("pointerup", (e) => this.pointerUp(e));
    this.svg.addEventListener("pointercancel", () => this.cancelDrag());
    this.picker = document.createElement("div");
    this.picker.className = "promotion";
    this.picker.hidden = true;
    const form = document.createElement("form");
    form.className = "san-input";
    this.input = document.createElement("input");
    this.input.autocomplete = "off";
    this.input.spellcheck = false;
    this.input.name = "san";
    this.inputError = document.createElement("span");
    this.inputError.className = "input-error";
    this.inputError.setAttribute("role", "alert");
    form.append(this.input, this.inputError);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.typed(this.input.value);
    });
    this.element.append(this.svg, this.picker, form);
    onLang(() => {
      this.input.placeholder = t("moveInput");
      this.input.setAttribute("aria-label", t("moveInputLabel"));
      this.render();
    });
  }

  setPosition(fen: string, view: PositionView = {}): void {
    this.placement = readFen(fen);
    this.view = view;
    this.selected = -1;
    this.picker.hidden = true;
    this.svg.setAttribute("data-fen", fen);
    this.svg.setAttribute("aria-label", fen);
    this.input.disabled = !(view.legal && view.legal.length > 0);
    this.render();
  }

  setArrows(arrows: string[]): void {
    this.view = { ...this.view, arrows };
    this.render();
  }

  get flipped(): boolean {
    return this.orientation === "b";
  }

  setOrientation(color: Color): void {
    this.orientation = color;
    this.render();
  }

  flip(): void {
    this.setOrientation(this.orientation === "w" ? "b" : "w");
  }

  /** The top-left corner of a square in board units. */
  private corner(square: number): [number, number] {
    const file = square % 8;
    const rank = Math.floor(square / 8);
    return this.orientation === "w" ? [file * SIZE, (7 - rank) * SIZE] : [(7 - file) * SIZE, rank * SIZE];
  }

  private squareAt(event: PointerEvent): number {
    const box = this.svg.getBoundingClientRect();
    const col = Math.floor(((event.clientX - box.left) / box.width) * 8);
    const row = Math.floor(((event.clientY - box.top) / box.height) * 8);
    if (col < 0 || col > 7 || row < 0 || row > 7) return -1;
    return this.orientation === "w" ? (7 - row) * 8 + col : row * 8 + (7 - col);
  }

  private movesFrom(square: number): BoardMove[] {
    const name = squareName(square);
    return (this.view.legal ?? []).filter((m) => m.uci.startsWith(name));
  }

  private render(): void {
    const svg = this.svg;
    svg.replaceChildren();
    const lastFrom = this.view.lastMove ? squareIndex(this.view.lastMove.slice(0, 2)) : -1;
    const lastTo = this.view.lastMove ? squareIndex(this.view.lastMove.slice(2, 4)) : -1;
    const checked = this.view.check && this.placement ? kingSquare(this.placement, this.placement.turn) : -1;
    const targets = new Set(this.selected >= 0 ? this.movesFrom(this.selected).map((m) => squareIndex(m.uci.slice(2, 4))) : []);
    for (let square = 0; square < 64; square++) {
      const [x, y] = this.corner(square);
      const light = (Math.floor(square / 8) + (square % 8)) % 2 === 1;
      let cls = light ? "sq light" : "sq dark";
      if (square === lastFrom || square === lastTo) cls += " last";
      if (square === this.selected) cls += " selected";
      if (square === checked) cls += " check";
      svg.append(el("rect", { x, y, width: SIZE, height: SIZE, class: cls, "data-square": squareName(square) }));
    }
    // Coordinates along the bottom and left edges, as seen.
    for (let i = 0; i < 8; i++) {
      const file = this.orientation === "w" ? i : 7 - i;
      const rank = this.orientation === "w" ? 7 - i : i;
      const fileText = el("text", { x: i * SIZE + SIZE - 6, y: 8 * SIZE - 6, class: `coord ${i % 2 === 0 ? "on-dark" : "on-light"}`, "text-anchor": "end" });
      fileText.textContent = "abcdefgh"[file];
      const rankText = el("text", { x: 5, y: i * SIZE + 22, class: `coord ${i % 2 === 0 ? "on-light" : "on-dark"}` });
      rankText.textContent = String(rank + 1);
      svg.append(fileText, rankText);
    }
    if (this.placement) {
      this.placement.pieces.forEach((piece, square) => {
        if (!piece) return;
        const [x, y] = this.corner(square);
        const use = el("use", { href: `#piece-${piece.color}${piece.type}`, x, y, width: SIZE, height: SIZE, class: "piece", "data-piece": `${piece.color}${piece.type}`, "data-on": squareName(square) });
        svg.append(use);
      });
    }
    for (const target of targets) {
      const [x, y] = this.corner(target);
      const occupied = this.placement?.pieces[target];
      svg.append(
        occupied
          ? el("circle", { cx: x + SIZE / 2, cy: y + SIZE / 2, r: SIZE / 2 - 5, class: "hint capture", "data-target": squareName(target) })
          : el("circle", { cx: x + SIZE / 2, cy: y + SIZE / 2, r: SIZE / 7, class: "hint", "data-target": squareName(target) }),
      );
    }
    for (const arrow of this.view.arrows ?? []) this.drawArrow(arrow);
  }

  private drawArrow(uci: string): void {
    if (!/^[a-h][1-8][a-h][1-8]/.test(uci)) return;
    const [fx, fy] = this.corner(squareIndex(uci.slice(0, 2)));
    const [tx, ty] = this.corner(squareIndex(uci.slice(2, 4)));
    const x1 = fx + SIZE / 2, y1 = fy + SIZE / 2, x2 = tx + SIZE / 2, y2 = ty + SIZE / 2;
    const len = Math.hypot(x2 - x1, y2 - y1);
    if (len === 0) return;
    const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
    const head = 34;
    const bx = x2 - ux * head, by = y2 - uy * head;
    const px = -uy, py = ux;
    const g = el("g", { class: "arrow" });
    g.append(
      el("line", { x1, y1, x2: bx, y2: by, "stroke-width": 14 }),
      el("polygon", { points: `${x2},${y2} ${bx + px * 22},${by + py * 22} ${bx - px * 22},${by - py * 22}` }),
    );
    this.svg.append(g);
  }

  private pointerDown(event: PointerEvent): void {
    if (event.button !== 0 || !this.placement) return;
    const square = this.squareAt(event);
    if (square < 0) return;
    if (this.selected >= 0 && this.tryMove(this.selected, square)) return;
    if (this.movesFrom(square).length > 0) {
      this.selected = square;
      this.render();
      const node = this.svg.querySelector<SVGElement>(`use[data-on="${squareName(square)}"]`);
      this.drag = { from: square, x: event.clientX, y: event.clientY, moved: false, node };
      this.svg.setPointerCapture?.(event.pointerId);
    } else if (this.selected >= 0) {
      this.selected = -1;
      this.render();
    }
  }

  private pointerMove(event: PointerEvent): void {
    const drag = this.drag;
    if (!drag || !drag.node) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    drag.moved = true;
    const box = this.svg.getBoundingClientRect();
    const scale = (8 * SIZE) / box.width;
    drag.node.setAttribute("transform", `translate(${dx * scale} ${dy * scale})`);
    drag.node.classList.add("dragging");
    this.svg.append(drag.node);
  }

  private pointerUp(event: PointerEvent): void {
    const drag = this.drag;
    this.drag = null;
    if (!drag || !drag.moved) return;
    const square = this.squareAt(event);
    if (square >= 0 && square !== drag.from && this.tryMove(drag.from, square)) return;
    this.render();
  }

  private cancelDrag(): void {
    this.drag = null;
    this.render();
  }

  /** Plays from -> to if legal (asking for the promotion piece when needed). */
  private tryMove(from: number, to: number): boolean {
    const prefix = squareName(from) + squareName(to);
    const moves = (this.view.legal ?? []).filter((m) => m.uci.startsWith(prefix));
    if (moves.length === 0) return false;
    if (moves.length === 1) {
      this.emit(moves[0].uci);
    } else {
      this.askPromotion(moves);
    }
    return true;
  }

  private askPromotion(moves: BoardMove[]): void {
    const color = this.placement?.turn ?? "w";
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
      this.selected = -1;
      this.render();
    });
    this.picker.append(cancel);
    this.picker.hidden = false;
    this.picker.querySelector("button")?.focus();
  }

  private emit(uci: string): void {
    this.picker.hidden = true;
    this.selected = -1;
    // Show the move at once; the owner replaces the position with the server's answer.
    if (this.placement) {
      const from = squareIndex(uci.slice(0, 2));
      const to = squareIndex(uci.slice(2, 4));
      const piece = this.placement.pieces[from];
      this.placement.pieces[to] = piece;
      this.placement.pieces[from] = null;
    }
    this.view = { ...this.view, legal: [], lastMove: uci, check: false, arrows: [] };
    this.render();
    this.onMove?.(uci);
  }

  private typed(text: string): void {
    const key = sanKey(text);
    if (!key) return;
    const legal = this.view.legal ?? [];
    const move = legal.find((m) => sanKey(m.san) === key || m.uci === text.trim().toLowerCase());
    if (!move) {
      this.inputError.textContent = `${t("illegalMove")}: ${text.slice(0, 20)}`;
      return;
    }
    this.inputError.textContent = "";
    this.input.value = "";
    this.emit(move.uci);
  }
}
