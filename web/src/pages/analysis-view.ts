// The analysis page's view: the form for a position, the board with its evaluation bar (a
// number on it), the lines (each move clickable), the move list with its cursor, the opening,
// and an honest word for finished positions. State and API calls are the controller's.

import { Board } from "../board/board.js";
import { START_FEN, readFen } from "../chess.js";
import { barText, depthText, tableMate, whiteShare } from "../format.js";
import type { AnalysisLine } from "../gen/chess/v1/search_pb.js";
import { localSan, onLang, t } from "../i18n.js";
import { MoveList, stepKey } from "../movelist.js";
import { ErrorBox, h, openingText, outcomeText, scoreText, tr, winnabilityText } from "../ui.js";
import { AnalysisCtrl } from "./analysis-ctrl.js";

export class AnalysisView {
  readonly element: HTMLElement;
  readonly ctrl = new AnalysisCtrl();
  /** Called when the position (start, moves, cursor) changes, for the page's address. */
  onNavigate: (() => void) | null = null;
  private readonly board = new Board("analysis");
  private readonly errors = new ErrorBox();
  private readonly input = h("textarea", { name: "position", rows: 3, spellcheck: false });
  private readonly multipv = h("select", { name: "multipv" });
  private readonly depth = h("select", { name: "depth" });
  private readonly analyseLabel = tr("analyse");
  private readonly analyseButton = h("button", { type: "button", name: "analyse" }, this.analyseLabel);
  private readonly lines = h("ol", { class: "lines", "aria-live": "polite" });
  private readonly info = h("p", { class: "info" });
  private readonly verdict = h("p", { class: "winnability", "aria-live": "polite" });
  private readonly opening = h("p", { class: "opening" });
  private readonly finished = h("p", { class: "finished", "aria-live": "polite", hidden: true });
  private readonly barFill = h("div", { class: "eval-white" });
  private readonly barNumber = h("span", { class: "eval-number" });
  private readonly bar = h("div", { class: "eval-bar", role: "meter", "aria-valuemin": "0", "aria-valuemax": "100" }, this.barFill, this.barNumber);
  private readonly moveList = new MoveList("moves");
  private shown = false;

  constructor() {
    const ctrl = this.ctrl;
    onLang(() => {
      this.input.placeholder = t("positionHint");
      this.input.setAttribute("aria-label", t("position"));
      const keep = [this.multipv.value, this.depth.value];
      this.multipv.replaceChildren(...[1, 2, 3, 4, 5].map((n) => h("option", { value: String(n) }, String(n))));
      this.depth.replaceChildren(...[8, 12, 16, 20, 24, 0].map((d) => h("option", { value: String(d) }, d ? String(d) : t("infinite"))));
      [this.multipv.value, this.depth.value] = keep[0] ? keep : ["3", "16"];
      if (ctrl.at) this.showPosition();
    });
    this.multipv.addEventListener("change", () => {
      ctrl.multipv = Number(this.multipv.value);
      ctrl.restart();
    });
    this.depth.addEventListener("change", () => {
      ctrl.depth = Number(this.depth.value);
      ctrl.restart();
    });
    ctrl.changed = (what, error) => {
      if (what === "position") this.showPosition();
      else if (what === "lines") this.showLines();
      else this.errors.show(error);
    };
    this.board.onMove = (uci) => this.act(ctrl.play([uci]));
    this.moveList.onSelect = (ply) => this.act(ctrl.goTo(ply));
    this.analyseButton.addEventListener("click", () => {
      this.errors.clear();
      ctrl.multipv = Number(this.multipv.value);
      ctrl.depth = Number(this.depth.value);
      ctrl.toggle();
      this.showLines();
    });
    const setUp = h("button", { type: "submit", name: "setup" }, tr("setUp"));
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); this.act(ctrl.setUp(this.input.value)); } },
      h("label", { class: "wide" }, tr("position"), this.input),
      setUp,
    );
    const back = h("button", { type: "button", name: "back", onclick: () => this.act(ctrl.goTo(ctrl.cursor - 1)) }, tr("back"));
    const forward = h("button", { type: "button", name: "forward", onclick: () => this.act(ctrl.goTo(ctrl.cursor + 1)) }, tr("forward"));
    this.board.frame.prepend(this.bar);
    this.element = h(
      "section",
      { class: "view analysis" },
      form,
      this.errors.element,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.board.element),
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
            forward,
            h("button", { type: "button", onclick: () => this.board.flip() }, tr("flip")),
          ),
          this.opening,
          this.finished,
          this.info,
          this.verdict,
          this.lines,
          this.moveList.element,
        ),
      ),
    );
    // A line's move is taken on pointerdown: the lines are redrawn at every depth, and a
    // button replaced between press and release would get no click. Keys still click.
    const playLine = (e: Event) => {
      const moves = (e.target as HTMLElement).closest<HTMLElement>(".pv-move")?.dataset.line;
      if (!moves) return;
      e.preventDefault();
      this.act(ctrl.play(moves.split(" ")));
    };
    this.lines.addEventListener("pointerdown", (e) => {
      if (e.button === 0) playLine(e);
    });
    this.lines.addEventListener("click", (e) => {
      if ((e as MouseEvent).detail === 0) playLine(e);
    });
    document.addEventListener("keydown", (e) => {
      if (!this.shown) return;
      const ply = stepKey(e, ctrl.cursor, ctrl.moves.length);
      if (ply === null) return;
      e.preventDefault();
      this.act(ctrl.goTo(ply));
    });
    this.act(ctrl.load(START_FEN, []));
  }

  /** The page is shown (`arg`: the address's position) or left (analysis cancelled). */
  show(visible: boolean, fen?: string, moves?: string[], ply?: number): void {
    this.shown = visible;
    if (!visible) {
      this.ctrl.pause();
      return;
    }
    const ctrl = this.ctrl;
    const same = (fen ?? START_FEN) === ctrl.startFen && (moves ?? []).join(" ") === ctrl.moves.join(" ");
    if (fen !== undefined && !same) this.act(ctrl.load(fen, moves ?? [], ply));
    else if (ply !== undefined && ply !== ctrl.cursor) this.act(ctrl.goTo(ply));
    else if (ctrl.on) ctrl.restart();
  }

  private act(work: Promise<void>): void {
    this.errors.clear();
    work.catch((e) => this.errors.show(e));
  }

  private showPosition(): void {
    const ctrl = this.ctrl;
    const at = ctrl.at;
    if (!at) return;
    this.board.setPosition(at.fen, { legal: at.legal, lastMove: ctrl.moves[ctrl.cursor - 1], check: at.check });
    this.moveList.set(ctrl.startFen, ctrl.sans);
    this.moveList.mark(ctrl.cursor);
    this.opening.textContent = at.opening ? openingText(at.opening) : "";
    this.verdict.textContent = winnabilityText(at.winnability.code);
    this.verdict.title = at.winnability.reasons.join("\n");
    this.showLines();
    this.onNavigate?.();
  }

  private showLines(): void {
    const ctrl = this.ctrl;
    const at = ctrl.at;
    // The label changes in place: a node replaced under the pointer would swallow a click.
    const label = ctrl.on ? "stop" : "analyse";
    if (this.analyseLabel.dataset.i18n !== label) {
      this.analyseLabel.dataset.i18n = label;
      this.analyseLabel.textContent = t(label);
    }
    this.analyseButton.setAttribute("aria-pressed", String(ctrl.on));
    if (!at) return;
    const whiteToMove = (readFen(at.fen)?.turn ?? "w") === "w";
    const outcome = at.outcome ?? (ctrl.linesFen === at.fen ? ctrl.lines?.outcome : undefined);
    this.finished.hidden = !outcome;
    if (outcome) {
      // Nothing to search: say how the game ended here, not "#-0 at depth 0".
      this.finished.textContent = outcomeText(outcome);
      this.finished.dataset.rule = String(outcome.rule);
      this.lines.replaceChildren();
      this.info.textContent = "";
      this.info.dataset.done = "true";
      this.board.setArrows([]);
      const share = outcome.pgnResult === "1-0" ? 100 : outcome.pgnResult === "0-1" ? 0 : 50;
      this.setBar(share, outcome.pgnResult === "1/2-1/2" ? "½" : outcome.pgnResult === "1-0" ? "1-0" : "0-1");
      return;
    }
    const answer = ctrl.linesFen === at.fen ? ctrl.lines : null;
    if (!answer) {
      this.lines.replaceChildren();
      this.info.textContent = ctrl.reconnecting ? t("reconnecting") : "";
      this.info.dataset.done = "false";
      this.board.setArrows([]);
      this.setBar(50, "");
      return;
    }
    const lines = [...answer.lines].sort((a, b) => a.multipv - b.multipv);
    this.lines.replaceChildren(...lines.map((line) => this.lineItem(line, whiteToMove)));
    const best = lines[0];
    if (!best) return;
    const first = best.pv[0]?.uci;
    this.board.setArrows(first ? [first] : []);
    this.info.textContent = `${t("depth")} ${depthText(best.depth, best.seldepth)} · ${best.nodes} ${t("nodes")} · ${best.nps} n/s${answer.done ? " ✓" : ""}`;
    this.info.dataset.done = String(answer.done);
    this.info.dataset.depth = String(best.depth);
    this.setBar(whiteShare(best.score, best.wdl, whiteToMove), barText(best.score, whiteToMove));
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
        h("button", { type: "button", class: "pv-move", title: move.uci, "data-line": line.pv.slice(0, i + 1).map((m) => m.uci).join(" ") }, localSan(move.san)),
        " ",
      );
    });
    // An endgame-table line is exact: say who mates in how many moves, or that it is a draw.
    const mate = line.tablebase ? tableMate(line.dtmPlies, whiteToMove) : null;
    const exact = !line.tablebase
      ? ""
      : mate
        ? t(mate.white ? "tbWhiteMates" : "tbBlackMates").replace("{n}", String(mate.moves))
        : t("tbDraw");
    return h(
      "li",
      { class: "line", "data-multipv": String(line.multipv), "data-tablebase": String(line.tablebase) },
      h("span", { class: "score" }, scoreText(line.score, whiteToMove)),
      ...(exact ? [h("span", { class: "tablebase" }, exact)] : []),
      h("span", { class: "depth" }, `d${line.depth}`),
      bar,
      pv,
    );
  }

  private setBar(whitePercent: number, text: string): void {
    const clamped = Math.max(0, Math.min(100, whitePercent));
    this.barFill.style.height = `${clamped}%`;
    this.barNumber.textContent = text;
    this.barNumber.classList.toggle("black-ahead", clamped < 50);
    this.bar.setAttribute("aria-valuenow", String(Math.round(clamped)));
    this.bar.setAttribute("aria-label", `${t("evaluation")} ${text || `${Math.round(clamped)}%`}`);
  }
}
