// Turns what a person does on the board into BoardState calls: pointer clicks and drags, the
// keyboard (arrows move the cursor square by square, Enter or Space picks up and puts down,
// Escape lets go), and the SAN field.

import { type BoardMove, matchTyped } from "../chess.js";
import { t } from "../i18n.js";
import { SIZE } from "./render.js";
import type { BoardState, Intent } from "./state.js";

export interface InputHost {
  readonly svg: SVGSVGElement;
  readonly state: BoardState;
  redraw(): void;
  /** A move to make (several: a promotion to choose). */
  play(moves: BoardMove[]): void;
  premoved(uci: string): void;
}

export function attachPointer(host: InputHost): void {
  const { svg, state } = host;
  let drag: { from: number; x: number; y: number; moved: boolean; node: SVGElement | null; toggle: boolean } | null = null;
  const at = (event: PointerEvent) => {
    const box = svg.getBoundingClientRect();
    return state.squareAt((event.clientX - box.left) / box.width, (event.clientY - box.top) / box.height);
  };
  const act = (intent: Intent) => {
    if (intent.kind === "play") host.play(intent.moves);
    else if (intent.kind === "premove") {
      host.redraw();
      host.premoved(intent.uci);
    } else if (intent.kind === "redraw") host.redraw();
    return intent.kind !== "none";
  };
  svg.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || !state.placement) return;
    const square = at(event);
    if (square < 0) return;
    const before = state.selected;
    if (square === before) {
      // Picked up again: a drag, or a click that lets go (on pointerup).
      const node = svg.querySelector<SVGElement>(`use[data-on="${svgName(square)}"]`);
      drag = { from: square, x: event.clientX, y: event.clientY, moved: false, node, toggle: true };
      svg.setPointerCapture?.(event.pointerId);
      return;
    }
    const intent = state.click(square);
    if (intent.kind === "play" || intent.kind === "premove") {
      act(intent);
      return;
    }
    act(intent);
    if (state.selected >= 0 && state.selected === square && before !== square) {
      const node = svg.querySelector<SVGElement>(`use[data-on="${svgName(square)}"]`);
      drag = { from: square, x: event.clientX, y: event.clientY, moved: false, node, toggle: false };
      svg.setPointerCapture?.(event.pointerId);
    }
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag || !drag.node) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    drag.moved = true;
    const box = svg.getBoundingClientRect();
    const scale = (8 * SIZE) / box.width;
    drag.node.setAttribute("transform", `translate(${dx * scale} ${dy * scale})`);
    drag.node.classList.add("dragging");
    svg.append(drag.node);
  });
  svg.addEventListener("pointerup", (event) => {
    const d = drag;
    drag = null;
    if (!d) return;
    if (!d.moved) {
      if (d.toggle) {
        state.selected = -1;
        host.redraw();
      }
      return;
    }
    const square = at(event);
    if (square >= 0 && square !== d.from && act(state.drop(d.from, square))) return;
    host.redraw();
  });
  svg.addEventListener("pointercancel", () => {
    drag = null;
    host.redraw();
  });
  // The keyboard: the focused square is the cursor.
  svg.addEventListener("focusin", (event) => {
    const name = (event.target as Element).getAttribute?.("data-square");
    if (name) state.cursor = (name.charCodeAt(1) - 49) * 8 + (name.charCodeAt(0) - 97);
  });
  svg.addEventListener("keydown", (event) => {
    const moves: Record<string, [number, number]> = { ArrowUp: [0, 1], ArrowDown: [0, -1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
    const step = moves[event.key];
    if (step) {
      event.preventDefault();
      event.stopPropagation();
      state.moveCursor(step[0], step[1]);
      host.redraw();
    } else if ((event.key === "Enter" || event.key === " ") && state.cursor >= 0) {
      event.preventDefault();
      event.stopPropagation();
      act(state.click(state.cursor));
    } else if (event.key === "Escape" && state.selected >= 0) {
      state.selected = -1;
      host.redraw();
    }
  });
}

function svgName(square: number): string {
  return "abcdefgh"[square % 8] + String(Math.floor(square / 8) + 1);
}

/** The SAN field: a typed move is played when legal; the error shows until the next move. */
export function sanField(state: BoardState, play: (move: BoardMove) => void): { form: HTMLFormElement; input: HTMLInputElement; error: HTMLElement } {
  const form = document.createElement("form");
  form.className = "san-input";
  const input = document.createElement("input");
  input.autocomplete = "off";
  input.spellcheck = false;
  input.name = "san";
  const error = document.createElement("span");
  error.className = "input-error";
  error.setAttribute("role", "alert");
  form.append(input, error);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    const move = matchTyped(state.legal, text);
    if (!move) {
      error.textContent = `${t("illegalMove")}: ${text.slice(0, 20)}`;
      return;
    }
    error.textContent = "";
    input.value = "";
    play(move);
  });
  return { form, input, error };
}
