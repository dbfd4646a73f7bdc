// Play the engine: a game on the rules service (CreateGame, MakeMove, Resign, ClaimDraw), the
// engine's replies through the gateway's EngineMove, clocks from the server's GameState.

import { api } from "./api.js";
import { Board } from "./board.js";
import { clockText } from "./chess.js";
import { Color, Outcome_Rule } from "./gen/chess/v1/common_pb.js";
import type { GameState } from "./gen/chess/v1/rules_pb.js";
import { localSan, onLang, t } from "./i18n.js";
import { ErrorBox, copy, download, h, outcomeText, ruleText, tr } from "./ui.js";

const LEVELS = [800, 1200, 1600, 2000, 2400, 2800, 0];
const CONTROLS = ["", "1+0", "3+2", "5+3", "10+5", "15+10"];

export class PlayView {
  readonly element: HTMLElement;
  private readonly board = new Board("play");
  private readonly errors = new ErrorBox();
  private readonly status = h("p", { class: "status", "aria-live": "polite" });
  private readonly result = h("p", { class: "result", "aria-live": "polite" });
  private readonly movesList = h("ol", { class: "moves" });
  private readonly clocks = { top: h("div", { class: "clock" }), bottom: h("div", { class: "clock" }) };
  private readonly pgn = h("textarea", { class: "pgn", readOnly: true, rows: 6, "aria-label": "PGN" });
  private readonly gameLink = h("a", { class: "game-id" });
  private readonly colorSelect = h("select", { name: "color" });
  private readonly levelSelect = h("select", { name: "level" });
  private readonly controlSelect = h("select", { name: "tc" });
  private readonly offerButton = h("button", { type: "button", name: "offer" }, tr("offerDraw"));
  private readonly claimButton = h("button", { type: "button", name: "claim" }, tr("claimDraw"));
  private readonly resignButton = h("button", { type: "button", name: "resign" }, tr("resign"));
  private state: GameState | null = null;
  private receivedAt = 0;
  private me: Color = Color.WHITE;
  private elo = 1600;
  private offerNext = false;
  private busy = false;
  private flagCheck = 0;

  constructor() {
    onLang(() => this.fillSelects());
    this.levelSelect.value = "1600";
    const start = h("button", { type: "submit", name: "start" }, tr("start"));
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); void this.start(); } },
      h("label", {}, tr("youPlay"), this.colorSelect),
      h("label", {}, tr("level"), this.levelSelect),
      h("label", {}, tr("timeControl"), this.controlSelect),
      start,
    );
    this.board.onMove = (uci) => void this.move(uci);
    this.offerButton.addEventListener("click", () => {
      this.offerNext = !this.offerNext;
      this.offerButton.setAttribute("aria-pressed", String(this.offerNext));
      this.renderStatus();
    });
    this.claimButton.addEventListener("click", () => void this.claim());
    this.resignButton.addEventListener("click", () => void this.resign());
    const copyButton = h("button", { type: "button" }, tr("copyPgn"));
    copyButton.addEventListener("click", () => void copy(this.pgn.value, copyButton));
    const downloadButton = h("button", { type: "button" }, tr("downloadPgn"));
    downloadButton.addEventListener("click", () => download(`game-${this.state?.gameId ?? "new"}.pgn`, this.pgn.value));
    const flip = h("button", { type: "button", onclick: () => { this.board.flip(); this.renderClocks(); } }, tr("flip"));
    this.element = h(
      "section",
      { class: "view play" },
      form,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.clocks.top, this.board.element, this.clocks.bottom),
        h(
          "div",
          { class: "side" },
          this.status,
          this.result,
          this.errors.element,
          h("div", { class: "buttons" }, flip, this.offerButton, this.claimButton, this.resignButton),
          this.movesList,
          h("p", {}, tr("gameId"), ": ", this.gameLink),
          this.pgn,
          h("div", { class: "buttons" }, copyButton, downloadButton),
        ),
      ),
    );
    this.board.setPosition("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    this.renderStatus();
    setInterval(() => this.renderClocks(), 100);
  }

  private fillSelects(): void {
    const keep = [this.colorSelect.value, this.levelSelect.value, this.controlSelect.value];
    this.colorSelect.replaceChildren(
      h("option", { value: "w" }, t("white")),
      h("option", { value: "b" }, t("black")),
      h("option", { value: "r" }, t("random")),
    );
    this.levelSelect.replaceChildren(
      ...LEVELS.map((elo) => h("option", { value: String(elo) }, elo === 0 ? t("fullStrength") : `Elo ${elo}`)),
    );
    this.controlSelect.replaceChildren(...CONTROLS.map((tc) => h("option", { value: tc }, tc || t("noClock"))));
    if (keep[0]) [this.colorSelect.value, this.levelSelect.value, this.controlSelect.value] = keep;
    this.renderStatus();
    this.renderMoves();
  }

  private async start(): Promise<void> {
    this.errors.clear();
    const choice = this.colorSelect.value;
    this.me = choice === "b" || (choice === "r" && Math.random() < 0.5) ? Color.BLACK : Color.WHITE;
    this.elo = Number(this.levelSelect.value);
    const engineName = this.elo === 0 ? "Engine" : `Engine (${this.elo})`;
    this.offerNext = false;
    this.offerButton.setAttribute("aria-pressed", "false");
    try {
      const state = await api().games.createGame({
        timeControlText: this.controlSelect.value,
        white: this.me === Color.WHITE ? "You" : engineName,
        black: this.me === Color.BLACK ? "You" : engineName,
      });
      this.board.setOrientation(this.me === Color.WHITE ? "w" : "b");
      await this.show(state);
      if (state.turn !== this.me) await this.engine();
    } catch (e) {
      this.errors.show(e);
    }
  }

  private async move(uci: string): Promise<void> {
    const state = this.state;
    if (!state || this.busy) return;
    this.errors.clear();
    this.busy = true;
    try {
      const next = await api().games.makeMove({
        gameId: state.gameId,
        move: uci,
        side: this.me,
        expectedPly: state.ply,
        offerDraw: this.offerNext,
      });
      this.offerNext = false;
      this.offerButton.setAttribute("aria-pressed", "false");
      await this.show(next);
      this.busy = false;
      if (!next.outcome) await this.engine();
    } catch (e) {
      this.errors.show(e);
      this.busy = false;
      await this.refresh();
    }
  }

  /** The engine's move: a time budget from its clock when there is one. */
  private async engine(): Promise<void> {
    const state = this.state;
    if (!state || state.outcome) return;
    this.busy = true;
    this.renderStatus();
    // A level plays within its own budget; full strength thinks a share of its clock, or 1 s.
    let timeMs = this.elo === 0 ? 1000n : 0n;
    if (this.elo === 0 && state.clock && state.timeControl) {
      const left = Number(this.me === Color.WHITE ? state.clock.blackMs : state.clock.whiteMs);
      const increment = Number(state.timeControl.periods[0]?.incrementMs ?? 0n);
      timeMs = BigInt(Math.max(50, Math.min(5000, Math.floor(left / 40 + increment * 0.8))));
    }
    try {
      const answer = await api().gateway.engineMove({
        gameId: state.gameId,
        strength: { elo: this.elo },
        limits: { timeMs },
        play: true,
      });
      this.busy = false;
      if (answer.game) await this.show(answer.game);
    } catch (e) {
      this.busy = false;
      this.errors.show(e);
      await this.refresh();
    }
  }

  private async claim(): Promise<void> {
    if (!this.state) return;
    try {
      await this.show(await api().games.claimDraw({ gameId: this.state.gameId, side: this.me }));
    } catch (e) {
      this.errors.show(e);
    }
  }

  private async resign(): Promise<void> {
    if (!this.state || this.state.outcome) return;
    try {
      await this.show(await api().games.resign({ gameId: this.state.gameId, side: this.me }));
    } catch (e) {
      this.errors.show(e);
    }
  }

  private async refresh(): Promise<void> {
    if (!this.state) return;
    try {
      await this.show(await api().games.getGame({ gameId: this.state.gameId }));
    } catch (e) {
      this.errors.show(e);
    }
  }

  private async show(state: GameState): Promise<void> {
    this.state = state;
    this.receivedAt = performance.now();
    this.flagCheck = 0;
    const last = state.moves.at(-1)?.move?.uci;
    let legal: { uci: string; san: string }[] = [];
    if (!state.outcome && state.turn === this.me) {
      const answer = await api().rules.legalMoves({ fen: state.fen });
      legal = answer.moves.map((m) => ({ uci: m.uci, san: m.san }));
    }
    this.board.setPosition(state.fen, { legal, lastMove: last, check: state.check });
    this.renderMoves();
    this.pgn.value = state.pgn;
    this.gameLink.textContent = state.gameId;
    this.gameLink.href = `#watch/${state.gameId}`;
    this.gameLink.dataset.gameId = state.gameId;
    this.renderStatus();
    this.renderClocks();
  }

  private renderMoves(): void {
    const moves = this.state?.moves ?? [];
    this.movesList.replaceChildren(
      ...pairs(moves.map((m) => m.move?.san ?? "")).map(([white, black]) =>
        h("li", {}, h("span", {}, localSan(white)), " ", h("span", {}, localSan(black ?? ""))),
      ),
    );
    this.movesList.scrollTop = this.movesList.scrollHeight;
  }

  private renderStatus(): void {
    const state = this.state;
    const playing = !!state && !state.outcome;
    this.offerButton.disabled = !playing;
    this.resignButton.disabled = !playing;
    this.claimButton.disabled = !(playing && state.turn === this.me && state.claimableDraw !== Outcome_Rule.UNSPECIFIED);
    this.claimButton.title = state && state.claimableDraw ? ruleText(state.claimableDraw) : "";
    if (!state) {
      this.status.textContent = t("newGame");
      this.result.textContent = "";
      return;
    }
    this.result.textContent = state.outcome ? `${t("gameOver")}: ${outcomeText(state.outcome)}` : "";
    this.result.dataset.outcome = state.outcome ? state.outcome.pgnResult : "";
    if (state.outcome) this.status.textContent = t("gameOver");
    else if (this.busy && state.turn !== this.me) this.status.textContent = t("engineThinking");
    else if (state.turn === this.me) this.status.textContent = this.offerNext ? `${t("yourMove")} · ${t("drawOffered")}` : t("yourMove");
    else this.status.textContent = t("engineThinking");
    this.status.dataset.turn = state.turn === this.me ? "me" : "engine";
  }

  private renderClocks(): void {
    const state = this.state;
    const [topColor, bottomColor] = this.board.flipped ? [Color.WHITE, Color.BLACK] : [Color.BLACK, Color.WHITE];
    for (const [node, color] of [[this.clocks.top, topColor], [this.clocks.bottom, bottomColor]] as const) {
      const name = color === Color.WHITE ? state?.white ?? t("white") : state?.black ?? t("black");
      if (!state?.clock) {
        node.textContent = name;
        node.classList.remove("running");
        continue;
      }
      const running = !state.outcome && state.clock.running === color;
      const base = Number(color === Color.WHITE ? state.clock.whiteMs : state.clock.blackMs);
      const left = running ? base - (performance.now() - this.receivedAt) : base;
      node.textContent = `${name}  ${clockText(left)}`;
      node.classList.toggle("running", running);
      // A flag has fallen by the local count: ask the server, which rules on it.
      if (running && left <= 0 && performance.now() - this.flagCheck > 1000) {
        this.flagCheck = performance.now();
        if (!this.busy) void this.refresh();
      }
    }
  }
}

function pairs<T>(items: T[]): Array<[T, T | undefined]> {
  const out: Array<[T, T | undefined]> = [];
  for (let i = 0; i < items.length; i += 2) out.push([items[i], items[i + 1]]);
  return out;
}
