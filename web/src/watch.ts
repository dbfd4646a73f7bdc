// Watch a game live: WatchGame streams the state and then every change; a lost stream is
// noticed and reopened (the first message of a new stream is the current state, so nothing
// is missed).

import { api, isAbort } from "./api.js";
import { Board } from "./board.js";
import { START_FEN, clockText } from "./chess.js";
import { Color } from "./gen/chess/v1/common_pb.js";
import { GameEvent_Kind, type GameState } from "./gen/chess/v1/rules_pb.js";
import { localSan, t } from "./i18n.js";
import { ErrorBox, h, outcomeText, tr } from "./ui.js";

export class WatchView {
  readonly element: HTMLElement;
  private readonly board = new Board("watch");
  private readonly errors = new ErrorBox();
  private readonly idInput = h("input", { name: "game", autocomplete: "off", spellcheck: false });
  private readonly status = h("p", { class: "status", "aria-live": "polite" });
  private readonly clocks = h("p", { class: "clock" });
  private readonly movesList = h("ol", { class: "moves" });
  private watching: AbortController | null = null;
  private state: GameState | null = null;

  constructor() {
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); void this.watch(this.idInput.value.trim()); } },
      h("label", {}, tr("gameId"), this.idInput),
      h("button", { type: "submit", name: "watch" }, tr("watch")),
    );
    this.element = h(
      "section",
      { class: "view watch" },
      form,
      this.errors.element,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.board.element),
        h("div", { class: "side" }, this.status, this.clocks, h("button", { type: "button", onclick: () => this.board.flip() }, tr("flip")), this.movesList),
      ),
    );
    this.board.setPosition(START_FEN);
  }

  async watch(gameId: string): Promise<void> {
    this.watching?.abort();
    this.errors.clear();
    this.idInput.value = gameId;
    if (!gameId) return;
    const controller = new AbortController();
    this.watching = controller;
    this.status.textContent = t("waiting");
    let failures = 0;
    while (this.watching === controller) {
      try {
        for await (const event of api().games.watchGame({ gameId }, { signal: controller.signal })) {
          failures = 0;
          if (event.state) this.show(event.state);
          if (event.kind === GameEvent_Kind.GAME_OVER) break;
        }
        // The stream ends when the game is over.
        if (this.state?.outcome || this.watching !== controller) break;
      } catch (e) {
        if (isAbort(e) || controller.signal.aborted) return;
        const code = (e as { code?: number }).code;
        // NOT_FOUND, INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED: no point retrying.
        if (code === 5 || code === 3 || code === 7 || code === 16) {
          this.errors.show(e);
          this.status.textContent = "";
          return;
        }
        failures++;
        this.status.textContent = t("reconnecting");
        this.status.dataset.state = "reconnecting";
      }
      await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** Math.min(failures, 5))));
    }
  }

  stop(): void {
    this.watching?.abort();
    this.watching = null;
  }

  private show(state: GameState): void {
    this.state = state;
    this.board.setPosition(state.fen, { lastMove: state.moves.at(-1)?.move?.uci, check: state.check });
    this.movesList.replaceChildren(...state.moves.map((m) => h("li", {}, localSan(m.move?.san ?? ""))));
    this.movesList.dataset.count = String(state.moves.length);
    if (state.outcome) {
      this.status.textContent = `${t("streamEnded")} ${outcomeText(state.outcome)}`;
      this.status.dataset.state = "over";
    } else {
      const turn = state.turn === Color.WHITE ? state.white || t("white") : state.black || t("black");
      this.status.textContent = `${t("watching")}: ${state.white} – ${state.black} · ${turn} ${t("toMove")}`;
      this.status.dataset.state = "live";
    }
    this.clocks.textContent = state.clock ? `${clockText(Number(state.clock.whiteMs))} – ${clockText(Number(state.clock.blackMs))}` : "";
  }
}
