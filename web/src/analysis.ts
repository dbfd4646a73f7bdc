// The analysis board: a position from FEN, PGN or moves (checked by the rules service), live
// lines from AnalyzeStream (MultiPV, depth, score, WDL), an evaluation bar, and the lines
// playable on the board.

import { api, isAbort, isUnreachable } from "./api.js";
import { Board } from "./board.js";
import { START_FEN, looksLikeFen, readFen } from "./chess.js";
import type { AnalysisLine, AnalyzeResponse } from "./gen/chess/v1/search_pb.js";
import { localSan, onLang, t } from "./i18n.js";
import { ErrorBox, h, scoreCp, scoreText, tr, winnabilityText } from "./ui.js";

export class AnalysisView {
  readonly element: HTMLElement;
  private readonly board = new Board("analysis");
  private readonly errors = new ErrorBox();
  private readonly input = h("textarea", { name: "position", rows: 3, spellcheck: false });
  private readonly multipv = h("select", { name: "multipv" });
  private readonly depth = h("select", { name: "depth" });
  private readonly analyseButton = h("button", { type: "button", name: "analyse" }, tr("analyse"));
  private readonly lines = h("ol", { class: "lines", "aria-live": "polite" });
  private readonly info = h("p", { class: "info" });
  private readonly verdict = h("p", { class: "winnability", "aria-live": "polite" });
  private readonly bar = h("div", { class: "eval-bar", role: "meter", "aria-valuemin": "0", "aria-valuemax": "100" }, h("div", { class: "eval-white" }));
  private readonly movesList = h("ol", { class: "moves" });
  private startFen = START_FEN;
  private moves: string[] = [];
  private sans: string[] = [];
  private fen = START_FEN;
  private running: AbortController | null = null;

  constructor() {
    onLang(() => {
      this.input.placeholder = t("positionHint");
      this.input.setAttribute("aria-label", t("position"));
      const keep = [this.multipv.value, this.depth.value];
      this.multipv.replaceChildren(...[1, 2, 3, 4, 5].map((n) => h("option", { value: String(n) }, String(n))));
      this.depth.replaceChildren(...[8, 12, 16, 20, 24, 0].map((d) => h("option", { value: String(d) }, d ? String(d) : t("infinite"))));
      [this.multipv.value, this.depth.value] = keep[0] ? keep : ["3", "16"];
    });
    this.board.onMove = (uci) => void this.play([uci]);
    this.analyseButton.addEventListener("click", () => (this.running ? this.stop() : void this.analyse()));
    const setUp = h("button", { type: "submit", name: "setup" }, tr("setUp"));
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); void this.setUp(this.input.value); } },
      h("label", { class: "wide" }, tr("position"), this.input),
      setUp,
    );
    const back = h("button", { type: "button", name: "back", onclick: () => void this.back() }, tr("back"));
    this.element = h(
      "section",
      { class: "view analysis" },
      form,
      this.errors.element,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column with-bar" }, this.bar, this.board.element),
        h(
          "div",
          { class: "side" },
          h(
            "div",
            { class: "buttons" },
            h("label", {}, tr("lines"), this.multipv),
            h("label", {}, tr("depth"), this.depth),
            this.analyseButton,
            back,
            h("button", { type: "button", onclick: () => this.board.flip() }, tr("flip")),
          ),
          this.info,
          this.verdict,
          this.lines,
          this.movesList,
        ),
      ),
    );
    this.load(START_FEN, []).catch((e) => this.errors.show(e));
  }

  /** Reads FEN, PGN or a move list, checks it with the rules service, and shows it. */
  async setUp(text: string): Promise<void> {
    this.errors.clear();
    const input = text.trim();
    try {
      if (!input) {
        await this.load(START_FEN, []);
      } else if (looksLikeFen(input)) {
        const answer = await api().rules.validateFen({ fen: input });
        await this.load(answer.fen, []);
      } else if (/^\s*\[|\d+\.\s*\S/.test(input)) {
        const answer = await api().rules.parsePgn({ pgn: input });
        const game = answer.games[0];
        if (!game) throw new Error("no game in the PGN text");
        if (game.error) throw new Error(`PGN ${game.errorLine}:${game.errorColumn}: ${game.error}`);
        await this.load(game.startFen || START_FEN, game.moves.map((m) => m.uci));
      } else if (readFen(input) === null && /\//.test(input)) {
        // Something FEN-like that does not parse: let the server say what is wrong.
        await api().rules.validateFen({ fen: input });
      } else {
        await this.load(START_FEN, input.split(/[\s,]+/).filter((m) => !/^\d+\.+$/.test(m)));
      }
    } catch (e) {
      this.errors.show(e);
    }
  }

  private async load(startFen: string, moves: string[]): Promise<void> {
    const converted = moves.length ? await api().rules.convertMoves({ fen: startFen, moves }) : null;
    this.startFen = startFen;
    this.moves = converted ? converted.moves.map((m) => m.uci) : [];
    this.sans = converted ? converted.moves.map((m) => m.san) : [];
    this.fen = converted?.fens.at(-1) ?? startFen;
    await this.showPosition();
  }

  private async play(ucis: string[]): Promise<void> {
    this.errors.clear();
    try {
      await this.load(this.startFen, [...this.moves, ...ucis]);
      if (this.running) {
        this.stop();
        void this.analyse();
      }
    } catch (e) {
      this.errors.show(e);
    }
  }

  private async back(): Promise<void> {
    if (this.moves.length === 0) return;
    this.errors.clear();
    try {
      await this.load(this.startFen, this.moves.slice(0, -1));
    } catch (e) {
      this.errors.show(e);
      return;
    }
    if (this.running) {
      this.stop();
      void this.analyse();
    }
  }

  private async showPosition(): Promise<void> {
    const legal = await api().rules.legalMoves({ fen: this.fen });
    const status = await api().rules.positionStatus({ fen: this.fen });
    const winnability = await api().rules.winnability({ fen: this.fen });
    this.board.setPosition(this.fen, {
      legal: legal.moves.map((m) => ({ uci: m.uci, san: m.san })),
      lastMove: this.moves.at(-1),
      check: status.check,
    });
    this.movesList.replaceChildren(...this.sans.map((san) => h("li", {}, localSan(san))));
    this.lines.replaceChildren();
    this.info.textContent = this.fen;
    this.verdict.textContent = winnabilityText(winnability.code);
    this.verdict.title = winnability.sides.map((s) => s.reason).filter((r) => r).join("\n");
    this.setBar(50);
  }

  private stop(): void {
    this.running?.abort();
    this.running = null;
    this.analyseButton.replaceChildren(tr("analyse"));
  }

  async analyse(): Promise<void> {
    this.errors.clear();
    const controller = new AbortController();
    this.running = controller;
    this.analyseButton.replaceChildren(tr("stop"));
    const request = {
      fen: this.fen,
      limits: { depth: Number(this.depth.value), timeMs: Number(this.depth.value) === 0 ? 600_000n : 0n },
      multipv: Number(this.multipv.value),
    };
    for (let attempt = 0; attempt < 5 && this.running === controller; attempt++) {
      try {
        for await (const answer of api().analysis.analyzeStream(request, { signal: controller.signal })) {
          if (this.running !== controller) return;
          this.showLines(answer);
        }
        break;
      } catch (e) {
        if (isAbort(e) || controller.signal.aborted) return;
        if (!isUnreachable(e)) {
          this.errors.show(e);
          break;
        }
        this.info.textContent = t("reconnecting");
        await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
      }
    }
    if (this.running === controller) this.stop();
  }

  private showLines(answer: AnalyzeResponse): void {
    const whiteToMove = (readFen(this.fen)?.turn ?? "w") === "w";
    const lines = [...answer.lines].sort((a, b) => a.multipv - b.multipv);
    this.lines.replaceChildren(...lines.map((line) => this.lineItem(line, whiteToMove)));
    const best = lines[0];
    if (best) {
      const first = best.pv[0]?.uci;
      this.board.setArrows(first ? [first] : []);
      this.info.textContent = `${t("depth")} ${best.depth}/${best.seldepth} · ${best.nodes} ${t("nodes")} · ${best.nps} n/s${answer.done ? " ✓" : ""}`;
      this.info.dataset.done = String(answer.done);
      const wdl = best.wdl;
      let white: number;
      if (wdl && wdl.win + wdl.draw + wdl.loss > 0) {
        const own = (wdl.win + wdl.draw / 2) / 10;
        white = whiteToMove ? own : 100 - own;
      } else {
        white = 100 / (1 + Math.exp(-scoreCp(best.score, whiteToMove) / 250));
      }
      this.setBar(white);
    }
  }

  private lineItem(line: AnalysisLine, whiteToMove: boolean): HTMLLIElement {
    const wdl = line.wdl;
    const bar = h("div", { class: "wdl", title: wdl ? `${wdl.win / 10}% / ${wdl.draw / 10}% / ${wdl.loss / 10}%` : "" });
    if (wdl) {
      // Win/draw/loss from White's point of view, as the board is read.
      const [w, l] = whiteToMove ? [wdl.win, wdl.loss] : [wdl.loss, wdl.win];
      for (const [cls, permille] of [["w", w], ["d", wdl.draw], ["l", l]] as const) {
        const part = h("span", { class: cls });
        part.style.width = `${permille / 10}%`;
        bar.append(part);
      }
    }
    const pv = h("span", { class: "pv" });
    line.pv.forEach((move, i) => {
      pv.append(
        h(
          "button",
          {
            type: "button",
            class: "pv-move",
            title: move.uci,
            onclick: () => void this.play(line.pv.slice(0, i + 1).map((m) => m.uci)),
          },
          localSan(move.san),
        ),
        " ",
      );
    });
    return h(
      "li",
      { class: "line", "data-multipv": String(line.multipv) },
      h("span", { class: "score" }, scoreText(line.score, whiteToMove)),
      h("span", { class: "depth" }, `d${line.depth}`),
      bar,
      pv,
    );
  }

  private setBar(whitePercent: number): void {
    const white = this.bar.firstElementChild as HTMLElement;
    const clamped = Math.max(2, Math.min(98, whitePercent));
    white.style.height = `${clamped}%`;
    this.bar.setAttribute("aria-valuenow", String(Math.round(clamped)));
    this.bar.setAttribute("aria-label", `${t("evaluation")} ${Math.round(clamped)}%`);
  }
}
