// The watch page's view: the game id form, the board (no move field: one only looks) between
// the players' clocks (counting down, the side to move marked), the status, and the move list
// (clickable, stepped with the arrow keys). State and streaming are the controller's.

import { Board } from "../board/board.js";
import { START_FEN } from "../chess.js";
import { clockText } from "../format.js";
import { Color } from "../gen/chess/v1/common_pb.js";
import { t } from "../i18n.js";
import { MoveList, stepKey } from "../movelist.js";
import { ErrorBox, h, openingText, outcomeText, tr } from "../ui.js";
import { WatchCtrl } from "./watch-ctrl.js";

export class WatchView {
  readonly element: HTMLElement;
  readonly ctrl = new WatchCtrl();
  /** Called with the id of a game the form asks to watch (for the page's address). */
  onWatch: ((gameId: string) => void) | null = null;
  private readonly board = new Board("watch", { input: false });
  private readonly errors = new ErrorBox();
  private readonly idInput = h("input", { name: "game", autocomplete: "off", spellcheck: false });
  private readonly status = h("p", { class: "status", "aria-live": "polite" });
  private readonly opening = h("p", { class: "opening" });
  private readonly clocks = { top: h("div", { class: "clock" }), bottom: h("div", { class: "clock" }) };
  private readonly moveList = new MoveList("moves");
  private cursor = -1;
  private shown = false;

  constructor() {
    const ctrl = this.ctrl;
    const form = h(
      "form",
      {
        class: "controls",
        onsubmit: (e: Event) => {
          e.preventDefault();
          const id = this.idInput.value.trim();
          if (id) this.onWatch?.(id);
        },
      },
      h("label", {}, tr("gameId"), this.idInput),
      h("button", { type: "submit", name: "watch" }, tr("watch")),
    );
    ctrl.changed = (what, error) => {
      if (what === "error") this.errors.show(error);
      if (what === "state") this.cursor = -1;
      this.render();
    };
    this.moveList.onSelect = (ply) => this.goTo(ply);
    this.element = h(
      "section",
      { class: "view watch" },
      form,
      this.errors.element,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.clocks.top, this.board.element, this.clocks.bottom),
        h("div", { class: "side" }, this.status, this.opening, h("div", { class: "buttons" }, h("button", { type: "button", onclick: () => { this.board.flip(); this.renderClocks(); } }, tr("flip"))), this.moveList.element),
      ),
    );
    this.board.setPosition(START_FEN);
    document.addEventListener("keydown", (e) => {
      if (!this.shown || !ctrl.state) return;
      const last = ctrl.state.moves.length;
      const ply = stepKey(e, this.cursor < 0 ? last : this.cursor, last);
      if (ply === null) return;
      e.preventDefault();
      this.goTo(ply);
    });
    setInterval(() => this.renderClocks(), 100);
  }

  show(visible: boolean, gameId?: string): void {
    this.shown = visible;
    if (!visible) {
      this.ctrl.stop();
      return;
    }
    if (gameId && (gameId !== this.ctrl.gameId || this.ctrl.status === "idle")) {
      this.errors.clear();
      this.idInput.value = gameId;
      void this.ctrl.watch(gameId);
    }
  }

  private goTo(ply: number): void {
    const state = this.ctrl.state;
    if (!state) return;
    this.cursor = ply >= state.moves.length ? -1 : Math.max(0, ply);
    this.render();
  }

  private render(): void {
    const ctrl = this.ctrl;
    const state = ctrl.state;
    this.status.dataset.state = ctrl.status;
    if (!state) {
      this.status.textContent = ctrl.status === "waiting" ? t("waiting") : ctrl.status === "reconnecting" ? t("reconnecting") : "";
      return;
    }
    const ply = this.cursor < 0 ? state.moves.length : this.cursor;
    const fen = ply === state.moves.length ? state.fen : ply === 0 ? state.startFen || START_FEN : state.moves[ply - 1].fenAfter;
    this.board.setPosition(fen, { lastMove: state.moves[ply - 1]?.move?.uci, check: ply === state.moves.length && state.check });
    this.moveList.set(state.startFen || START_FEN, state.moves.map((m) => m.move?.san ?? ""));
    this.moveList.mark(ply);
    this.opening.textContent = state.opening ? openingText(state.opening) : "";
    if (state.outcome) {
      this.status.textContent = `${t("streamEnded")} ${outcomeText(state.outcome)}`;
    } else if (ctrl.status === "reconnecting") {
      this.status.textContent = t("reconnecting");
    } else {
      const turn = state.turn === Color.WHITE ? state.white || t("white") : state.black || t("black");
      this.status.textContent = `${t("watching")}: ${state.white || t("white")} – ${state.black || t("black")} · ${turn} ${t("toMove")}`;
    }
    this.status.dataset.turn = state.turn === Color.WHITE ? "white" : "black";
    this.renderClocks();
  }

  private renderClocks(): void {
    const state = this.ctrl.state;
    const [topColor, bottomColor] = this.board.flipped ? [Color.WHITE, Color.BLACK] : [Color.BLACK, Color.WHITE];
    for (const [node, color] of [[this.clocks.top, topColor], [this.clocks.bottom, bottomColor]] as const) {
      const name = color === Color.WHITE ? state?.white || t("white") : state?.black || t("black");
      const left = this.ctrl.clockLeft(color);
      node.textContent = left ? `${name}  ${clockText(left.ms)}` : name;
      node.classList.toggle("running", !!left?.running);
      node.classList.toggle("to-move", !!state && !state.outcome && state.turn === color);
      node.dataset.color = color === Color.WHITE ? "white" : "black";
    }
  }
}
