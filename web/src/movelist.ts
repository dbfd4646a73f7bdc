// A move list the person can step through: moves grouped per move number (numbered from the
// start position's move number), each a button; the move at the cursor is marked. Pages give
// it the moves and react to `onSelect(ply)` (ply 0: the start position).

import { moveRows } from "./chess.js";
import { localSan, onLang } from "./i18n.js";
import { h } from "./ui.js";

export class MoveList {
  readonly element: HTMLOListElement;
  onSelect: ((ply: number) => void) | null = null;
  private startFen = "";
  private sans: string[] = [];
  private symbols: string[] = [];
  private cursor = 0;

  constructor(className = "moves") {
    this.element = h("ol", { class: `move-list ${className}`, "aria-label": "moves" });
    this.element.addEventListener("click", (e) => {
      const ply = (e.target as HTMLElement).closest<HTMLElement>("[data-ply]")?.dataset.ply;
      if (ply !== undefined) this.onSelect?.(Number(ply));
    });
    onLang(() => this.render());
  }

  /** The moves (SAN) from `startFen`, with optional judgement symbols per move. */
  set(startFen: string, sans: string[], symbols: string[] = []): void {
    this.startFen = startFen;
    this.sans = sans;
    this.symbols = symbols;
    this.cursor = Math.min(this.cursor, sans.length);
    this.render();
  }

  get length(): number {
    return this.sans.length;
  }

  /** Marks the move at `ply` (0: none, the start position). */
  mark(ply: number): void {
    this.cursor = ply;
    for (const b of this.element.querySelectorAll<HTMLElement>("[data-ply]")) {
      const current = Number(b.dataset.ply) === ply;
      b.classList.toggle("current", current);
      if (current) b.setAttribute("aria-current", "step");
      else b.removeAttribute("aria-current");
    }
    const current = this.element.querySelector<HTMLElement>(".current");
    if (current) {
      // Scroll the list, not the page.
      const list = this.element;
      const top = current.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - current.offsetHeight) list.scrollTop = top - list.clientHeight / 2;
    }
  }

  private render(): void {
    const move = (m: { ply: number; san: string } | null, white: boolean) =>
      m
        ? h("button", { type: "button", class: "move", "data-ply": String(m.ply) }, localSan(m.san), this.symbols[m.ply - 1] ? h("span", { class: "symbol", "data-symbol": this.symbols[m.ply - 1] }, this.symbols[m.ply - 1]) : null)
        : h("span", { class: "move empty" }, white ? "…" : "");
    this.element.replaceChildren(
      ...moveRows(this.startFen, this.sans).map((row) => h("li", { "data-number": String(row.number) }, h("span", { class: "number" }, `${row.number}.`), move(row.white, true), move(row.black, false))),
    );
    this.element.dataset.count = String(this.sans.length);
    this.mark(this.cursor);
  }
}

/** ← → ↑ ↓ Home End on the page step a cursor (unless the focus is in a text field or on the
 * board); returns the new ply, or null for other keys. */
export function stepKey(event: KeyboardEvent, ply: number, last: number): number | null {
  const target = event.target as HTMLElement | null;
  if (target && (/^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) || target.closest?.("svg[data-board]"))) return null;
  if (event.altKey || event.ctrlKey || event.metaKey) return null;
  switch (event.key) {
    case "ArrowLeft":
      return Math.max(0, ply - 1);
    case "ArrowRight":
      return Math.min(last, ply + 1);
    case "ArrowUp":
    case "Home":
      return 0;
    case "ArrowDown":
    case "End":
      return last;
    default:
      return null;
  }
}
