// The play page's view: the form for a new game (asking before a game in progress is
// abandoned), the board between the two clocks, the status (with the engine's declined draw
// offer), the opening as it changes, the move list (clickable, stepped with the arrow keys),
// the result and the PGN. State and API calls are the controller's (play-ctrl.ts).

import { Board } from "../board/board.js";
import { START_FEN } from "../chess.js";
import { clockText } from "../format.js";
import { Color, Outcome_Rule } from "../gen/chess/v1/common_pb.js";
import { onLang, t } from "../i18n.js";
import { MoveList, stepKey } from "../movelist.js";
import { moveSound } from "../settings.js";
import { ErrorBox, copy, download, h, openingText, outcomeText, ruleText, tr, winnabilityText } from "../ui.js";
import { PlayCtrl } from "./play-ctrl.js";

// Levels as calibrated against Stockfish's UCI_Elo (docs/strength.md, "Levels"; below its
// weakest, 1350, with matches of the engine's own weaker settings): above about 2759 every
// level plays as the strongest setting, so none is offered there.
const LEVELS = [800, 1100, 1300, 1500, 1800, 2100, 2400, 2600, 0];
/** The level the form starts with: one of LEVELS (a value that is not would leave the choice empty). */
const DEFAULT_LEVEL = "1500";
const CONTROLS = ["", "1+0", "3+2", "5+3", "10+5", "15+10"];

export class PlayView {
  readonly element: HTMLElement;
  readonly ctrl = new PlayCtrl();
  /** Called with the game's id when a game starts or resumes (for the page's address). */
  onGame: ((gameId: string) => void) | null = null;
  private readonly board = new Board("play");
  private readonly errors = new ErrorBox();
  private readonly status = h("p", { class: "status", "aria-live": "polite" });
  private readonly notice = h("p", { class: "notice", "aria-live": "polite" });
  private readonly opening = h("p", { class: "opening" });
  private readonly verdict = h("p", { class: "winnability", "aria-live": "polite" });
  private readonly result = h("p", { class: "result", "aria-live": "polite" });
  private readonly moveList = new MoveList("moves");
  private readonly clocks = { top: h("div", { class: "clock" }), bottom: h("div", { class: "clock" }) };
  private readonly pgn = h("textarea", { class: "pgn", readOnly: true, rows: 6, "aria-label": "PGN" });
  private readonly gameLink = h("a", { class: "game-id" });
  private readonly colorSelect = h("select", { name: "color" });
  private readonly levelSelect = h("select", { name: "level" });
  private readonly controlSelect = h("select", { name: "tc" });
  private readonly offerButton = h("button", { type: "button", name: "offer" }, tr("offerDraw"));
  private readonly claimButton = h("button", { type: "button", name: "claim" }, tr("claimDraw"));
  private readonly resignButton = h("button", { type: "button", name: "resign" }, tr("resign"));
  private readonly takeBackButton = h("button", { type: "button", name: "takeback" }, tr("takeBack"));
  private readonly confirmBox = h("div", { class: "confirm", role: "alertdialog", hidden: true });
  /** The ply shown on the board (the last one unless the person steps back). */
  private cursor = 0;
  private shown = false;
  private lastPly = -1;

  constructor() {
    const ctrl = this.ctrl;
    onLang(() => this.fillSelects());
    this.levelSelect.value = DEFAULT_LEVEL;
    const start = h("button", { type: "submit", name: "start" }, tr("start"));
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); this.askStart(); } },
      h("label", {}, tr("youPlay"), this.colorSelect),
      h("label", {}, tr("level"), this.levelSelect),
      h("label", {}, tr("timeControl"), this.controlSelect),
      start,
    );
    ctrl.changed = (what, error) => {
      if (what === "error") this.errors.show(error);
      else if (what === "state") this.showState();
      else this.renderStatus();
    };
    this.board.onMove = (uci) => {
      this.errors.clear();
      void ctrl.move(uci);
    };
    this.moveList.onSelect = (ply) => this.goTo(ply);
    this.offerButton.addEventListener("click", () => ctrl.toggleOffer());
    this.claimButton.addEventListener("click", () => this.act(ctrl.claim()));
    this.resignButton.addEventListener("click", () => this.act(ctrl.resign()));
    this.takeBackButton.addEventListener("click", () => {
      this.errors.clear();
      void ctrl.takeBack();
    });
    const copyButton = h("button", { type: "button" }, tr("copyPgn"));
    copyButton.addEventListener("click", () => void copy(this.pgn.value, copyButton));
    const downloadButton = h("button", { type: "button" }, tr("downloadPgn"));
    downloadButton.addEventListener("click", () => download(`game-${ctrl.state?.gameId ?? "new"}.pgn`, this.pgn.value));
    const flip = h("button", { type: "button", onclick: () => { this.board.flip(); this.renderClocks(); } }, tr("flip"));
    this.element = h(
      "section",
      { class: "view play" },
      form,
      this.confirmBox,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.clocks.top, this.board.element, this.clocks.bottom),
        h(
          "div",
          { class: "side" },
          this.status,
          this.notice,
          this.result,
          this.errors.element,
          this.opening,
          this.verdict,
          h("div", { class: "buttons" }, flip, this.takeBackButton, this.offerButton, this.claimButton, this.resignButton),
          this.moveList.element,
          h("p", {}, tr("gameId"), ": ", this.gameLink),
          this.pgn,
          h("div", { class: "buttons" }, copyButton, downloadButton),
        ),
      ),
    );
    this.board.setPosition(START_FEN);
    this.renderStatus();
    document.addEventListener("keydown", (e) => {
      if (!this.shown || !ctrl.state) return;
      const ply = stepKey(e, this.cursor, ctrl.state.moves.length);
      if (ply === null) return;
      e.preventDefault();
      this.goTo(ply);
    });
    setInterval(() => this.renderClocks(), 100);
  }

  show(visible: boolean, gameId?: string): void {
    this.shown = visible;
    if (visible && gameId && gameId !== this.ctrl.state?.gameId) {
      this.act(
        this.ctrl.resume(gameId).then((mine) => {
          // Not a game of this browser: watch it instead.
          if (!mine) window.location.replace(`#watch/${encodeURIComponent(gameId)}`);
        }),
      );
    }
  }

  private act(work: Promise<unknown>): void {
    this.errors.clear();
    work.catch((e) => this.errors.show(e));
  }

  /** Start: at once, or after asking when a game is in progress. */
  private askStart(): void {
    if (!this.ctrl.playing) {
      this.act(this.start());
      return;
    }
    const yes = h("button", { type: "button", name: "abandon" }, t("start"));
    const no = h("button", { type: "button", name: "keep" }, "×");
    yes.addEventListener("click", () => {
      this.confirmBox.hidden = true;
      this.act(this.start());
    });
    no.addEventListener("click", () => (this.confirmBox.hidden = true));
    this.confirmBox.replaceChildren(h("p", {}, t("abandonGame")), h("div", { class: "buttons" }, yes, no));
    this.confirmBox.hidden = false;
    no.focus();
  }

  private async start(): Promise<void> {
    this.board.setOrientation(this.colorSelect.value === "b" ? "b" : "w");
    await this.ctrl.start(this.colorSelect.value, Number(this.levelSelect.value), this.controlSelect.value);
  }

  private fillSelects(): void {
    const keep = [this.colorSelect.value, this.levelSelect.value, this.controlSelect.value];
    this.colorSelect.replaceChildren(h("option", { value: "w" }, t("white")), h("option", { value: "b" }, t("black")), h("option", { value: "r" }, t("random")));
    this.levelSelect.replaceChildren(...LEVELS.map((elo) => h("option", { value: String(elo) }, elo === 0 ? t("fullStrength") : `Elo ${elo}`)));
    this.controlSelect.replaceChildren(...CONTROLS.map((tc) => h("option", { value: tc }, tc || t("noClock"))));
    if (keep[0]) [this.colorSelect.value, this.levelSelect.value, this.controlSelect.value] = keep;
    this.renderStatus();
  }

  private showState(): void {
    const ctrl = this.ctrl;
    const state = ctrl.state;
    if (!state) return;
    const newGame = this.gameLink.dataset.gameId !== state.gameId;
    if (newGame) {
      this.board.setOrientation(ctrl.me === Color.WHITE ? "w" : "b");
      this.onGame?.(state.gameId);
    }
    if (state.moves.length !== this.lastPly && this.lastPly >= 0 && !newGame) moveSound();
    this.lastPly = state.moves.length;
    this.cursor = state.moves.length;
    this.board.setPremoveSide(state.outcome ? null : ctrl.me === Color.WHITE ? "w" : "b");
    this.board.setPosition(state.fen, { legal: ctrl.legal, lastMove: state.moves.at(-1)?.move?.uci, check: state.check });
    this.moveList.set(state.startFen || START_FEN, state.moves.map((m) => m.move?.san ?? ""));
    this.moveList.mark(this.cursor);
    this.pgn.value = state.pgn;
    this.gameLink.textContent = state.gameId;
    this.gameLink.href = `#watch/${state.gameId}`;
    this.gameLink.dataset.gameId = state.gameId;
    this.opening.textContent = state.opening ? openingText(state.opening) : "";
    this.verdict.textContent = state.outcome ? "" : winnabilityText(ctrl.winnability.code);
    this.verdict.title = ctrl.winnability.reasons.join("\n");
    this.renderStatus();
    this.renderClocks();
  }

  /** Shows the position after `ply` (the board takes moves only at the last one). */
  private goTo(ply: number): void {
    const state = this.ctrl.state;
    if (!state) return;
    this.cursor = Math.max(0, Math.min(state.moves.length, ply));
    if (this.cursor === state.moves.length) {
      this.showState();
      return;
    }
    const fen = this.cursor === 0 ? state.startFen || START_FEN : state.moves[this.cursor - 1].fenAfter;
    this.board.setPremoveSide(null);
    this.board.setPosition(fen, { lastMove: state.moves[this.cursor - 1]?.move?.uci });
    this.moveList.mark(this.cursor);
  }

  private renderStatus(): void {
    const ctrl = this.ctrl;
    const state = ctrl.state;
    const playing = ctrl.playing;
    this.offerButton.disabled = !playing;
    this.offerButton.setAttribute("aria-pressed", String(ctrl.offerNext));
    this.resignButton.disabled = !playing;
    this.takeBackButton.disabled = !ctrl.canTakeBack;
    this.claimButton.disabled = !(ctrl.myTurn && state!.claimableDraw !== Outcome_Rule.UNSPECIFIED);
    this.claimButton.title = state && state.claimableDraw ? ruleText(state.claimableDraw) : "";
    this.notice.textContent = ctrl.declined ? t("engineDeclined") : "";
    this.notice.dataset.declined = String(ctrl.declined);
    if (!state) {
      this.status.textContent = t("newGame");
      this.result.textContent = "";
      return;
    }
    this.result.textContent = state.outcome ? `${t("gameOver")}: ${outcomeText(state.outcome)}` : "";
    this.result.dataset.outcome = state.outcome ? state.outcome.pgnResult : "";
    if (state.outcome) this.status.textContent = t("gameOver");
    else if (state.turn === ctrl.me) this.status.textContent = ctrl.offerNext ? `${t("yourMove")} · ${t("drawOffered")}` : t("yourMove");
    else this.status.textContent = t("engineThinking");
    this.status.dataset.turn = state.turn === ctrl.me && !ctrl.busy ? "me" : "engine";
  }

  private renderClocks(): void {
    const ctrl = this.ctrl;
    const state = ctrl.state;
    const [topColor, bottomColor] = this.board.flipped ? [Color.WHITE, Color.BLACK] : [Color.BLACK, Color.WHITE];
    for (const [node, color] of [[this.clocks.top, topColor], [this.clocks.bottom, bottomColor]] as const) {
      const name = color === Color.WHITE ? state?.white || t("white") : state?.black || t("black");
      const left = ctrl.clockLeft(color);
      node.textContent = left ? `${name}  ${clockText(left.ms)}` : name;
      node.classList.toggle("running", !!left?.running);
    }
  }
}
