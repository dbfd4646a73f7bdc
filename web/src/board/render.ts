// Draws a BoardState as SVG: squares (each focusable by the keyboard cursor and labelled for
// screen readers), coordinates, pieces, move hints, the premove, arrows; the last move's
// piece slides in (unless the person prefers reduced motion).

import { type Placement, squareIndex, squareName } from "../chess.js";
import { pieceLabel, t } from "../i18n.js";
import type { BoardState } from "./state.js";

export const SIZE = 100;
const SVG = "http://www.w3.org/2000/svg";

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

const reducedMotion = typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;

/** Redraws the whole board; `slideFrom` is the placement before the last move, to animate it. */
export function render(svg: SVGSVGElement, state: BoardState, slideFrom: Placement | null = null): void {
  const hadFocus = svg.contains(document.activeElement);
  svg.replaceChildren();
  const last = state.lastMove;
  const lastFrom = last ? squareIndex(last.slice(0, 2)) : -1;
  const lastTo = last ? squareIndex(last.slice(2, 4)) : -1;
  const premoveFrom = state.premove ? squareIndex(state.premove.slice(0, 2)) : -1;
  const premoveTo = state.premove ? squareIndex(state.premove.slice(2, 4)) : -1;
  const checked = state.checkedKing();
  const cursor = state.cursor;
  // The one square in the tab order: the cursor, else the side to move's king.
  const tabStop = cursor >= 0 ? cursor : Math.max(0, state.placement?.pieces.findIndex((p) => p?.type === "k" && p.color === state.placement?.turn) ?? 0);
  for (let square = 0; square < 64; square++) {
    const [x, y] = state.corner(square, SIZE);
    const light = (Math.floor(square / 8) + (square % 8)) % 2 === 1;
    let cls = light ? "sq light" : "sq dark";
    if (square === lastFrom || square === lastTo) cls += " last";
    if (square === premoveFrom || square === premoveTo) cls += " premove";
    if (square === state.selected) cls += " selected";
    if (square === checked) cls += " check";
    if (square === cursor) cls += " cursor";
    const name = squareName(square);
    const piece = state.placement?.pieces[square];
    svg.append(
      el("rect", {
        x, y, width: SIZE, height: SIZE, class: cls, "data-square": name,
        role: "gridcell",
        tabindex: square === tabStop ? 0 : -1,
        "aria-label": piece ? pieceLabel(piece.color, piece.type, name) : `${name} ${t("emptySquare")}`,
        "aria-selected": String(square === state.selected),
      }),
    );
  }
  // Coordinates along the bottom and left edges, as seen.
  const white = state.orientation === "w";
  for (let i = 0; i < 8; i++) {
    const file = white ? i : 7 - i;
    const rank = white ? 7 - i : i;
    const fileText = el("text", { x: i * SIZE + SIZE - 6, y: 8 * SIZE - 6, class: `coord ${i % 2 === 0 ? "on-dark" : "on-light"}`, "text-anchor": "end", "aria-hidden": "true" });
    fileText.textContent = "abcdefgh"[file];
    const rankText = el("text", { x: 5, y: i * SIZE + 22, class: `coord ${i % 2 === 0 ? "on-light" : "on-dark"}`, "aria-hidden": "true" });
    rankText.textContent = String(rank + 1);
    svg.append(fileText, rankText);
  }
  const pieces = state.placement?.pieces ?? [];
  pieces.forEach((piece, square) => {
    if (!piece) return;
    const [x, y] = state.corner(square, SIZE);
    const use = el("use", { href: `#piece-${piece.color}${piece.type}`, x, y, width: SIZE, height: SIZE, class: "piece", "data-piece": `${piece.color}${piece.type}`, "data-on": squareName(square), "aria-hidden": "true" });
    svg.append(use);
    // The moved piece slides from where it was.
    if (slideFrom && !reducedMotion && square === lastTo && slideFrom.pieces[lastFrom]?.color === piece.color) {
      const [fx, fy] = state.corner(lastFrom, SIZE);
      use.style.transform = `translate(${fx - x}px, ${fy - y}px)`;
      use.getBoundingClientRect();
      requestAnimationFrame(() => {
        use.classList.add("sliding");
        use.style.transform = "";
      });
    }
  });
  for (const target of state.targets()) {
    const [x, y] = state.corner(target, SIZE);
    const occupied = state.placement?.pieces[target];
    svg.append(
      occupied
        ? el("circle", { cx: x + SIZE / 2, cy: y + SIZE / 2, r: SIZE / 2 - 5, class: "hint capture", "data-target": squareName(target) })
        : el("circle", { cx: x + SIZE / 2, cy: y + SIZE / 2, r: SIZE / 7, class: "hint", "data-target": squareName(target) }),
    );
  }
  for (const arrow of state.arrows) drawArrow(svg, state, arrow);
  if (hadFocus && cursor >= 0) svg.querySelector<SVGElement>(`rect[data-square="${squareName(cursor)}"]`)?.focus();
}

function drawArrow(svg: SVGSVGElement, state: BoardState, uci: string): void {
  if (!/^[a-h][1-8][a-h][1-8]/.test(uci)) return;
  const [fx, fy] = state.corner(squareIndex(uci.slice(0, 2)), SIZE);
  const [tx, ty] = state.corner(squareIndex(uci.slice(2, 4)), SIZE);
  const x1 = fx + SIZE / 2, y1 = fy + SIZE / 2, x2 = tx + SIZE / 2, y2 = ty + SIZE / 2;
  const len = Math.hypot(x2 - x1, y2 - y1);
  if (len === 0) return;
  const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
  const head = 34;
  const bx = x2 - ux * head, by = y2 - uy * head;
  const px = -uy, py = ux;
  const g = el("g", { class: "arrow", "data-arrow": uci.slice(0, 4) });
  g.append(
    el("line", { x1, y1, x2: bx, y2: by, "stroke-width": 14 }),
    el("polygon", { points: `${x2},${y2} ${bx + px * 22},${by + py * 22} ${bx - px * 22},${by - py * 22}` }),
  );
  svg.append(g);
}
