// The review page's view: the form, the players' accuracy (overall and by phase), the
// opening with its class, the evaluation graph with the cursor on it, the moves grouped per
// move number with their judgements, "next mistake", the board with the best move's arrow,
// and the annotated PGN. State and API calls are the controller's (review-ctrl.ts).

import { Board } from "../board/board.js";
import { START_FEN, moveNumberText } from "../chess.js";
import { scoreCp, scoreText } from "../format.js";
import { Color } from "../gen/chess/v1/common_pb.js";
import { Judgement, type PlayerReview, type ReviewedMove } from "../gen/chess/v1/search_pb.js";
import { localSan, onLang, t } from "../i18n.js";
import { MoveList, stepKey } from "../movelist.js";
import { ErrorBox, copy, download, h, openingText, tr } from "../ui.js";
import { ReviewCtrl } from "./review-ctrl.js";

const SVG = "http://www.w3.org/2000/svg";

export class ReviewView {
  readonly element: HTMLElement;
  readonly ctrl = new ReviewCtrl();
  /** Called after a review, with its PGN (for the page's address). */
  onReviewed: ((pgn: string) => void) | null = null;
  private readonly board = new Board("review", { input: false });
  private readonly errors = new ErrorBox();
  private readonly input = h("textarea", { name: "pgn", rows: 8, spellcheck: false });
  private readonly runButton = h("button", { type: "submit", name: "review" }, tr("review"));
  private readonly players = h("table", { class: "players" });
  private readonly phases = h("table", { class: "phases" });
  private readonly opening = h("p", { class: "opening" });
  private readonly graph = h("div", { class: "graph" });
  private readonly moveList = new MoveList("review-moves");
  private readonly detail = h("p", { class: "move-detail", "aria-live": "polite" });
  private readonly annotated = h("textarea", { class: "pgn", readOnly: true, rows: 8, "aria-label": "PGN" });
  private readonly progress = h("p", { class: "info", "aria-live": "polite" });
  private shown = false;

  constructor() {
    const ctrl = this.ctrl;
    onLang(() => {
      this.input.setAttribute("aria-label", t("pgnText"));
      if (ctrl.review) this.showReview();
    });
    const file = h("input", { type: "file", accept: ".pgn,text/plain", name: "upload" });
    file.addEventListener("change", async () => {
      const chosen = file.files?.[0];
      if (chosen) this.input.value = await chosen.text();
    });
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); void this.run(this.input.value); } },
      h("label", { class: "wide" }, tr("pgnText"), this.input),
      h("label", {}, tr("uploadPgn"), file),
      this.runButton,
    );
    const copyButton = h("button", { type: "button" }, tr("copyPgn"));
    copyButton.addEventListener("click", () => void copy(this.annotated.value, copyButton));
    const downloadButton = h("button", { type: "button" }, tr("downloadPgn"));
    downloadButton.addEventListener("click", () => download("review.pgn", this.annotated.value));
    const next = h("button", { type: "button", name: "next-mistake" }, tr("nextMistake"));
    next.addEventListener("click", () => {
      const ply = ctrl.nextMistake();
      if (ply !== null) ctrl.goTo(ply);
    });
    this.moveList.onSelect = (ply) => ctrl.goTo(ply);
    ctrl.changed = () => this.showCursor();
    this.element = h(
      "section",
      { class: "view review" },
      form,
      this.errors.element,
      this.progress,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.board.element, this.detail),
        h(
          "div",
          { class: "side" },
          this.opening,
          this.players,
          this.phases,
          this.graph,
          h("div", { class: "buttons" }, next),
          h("p", { class: "legend" }, tr("judgementNames")),
          this.moveList.element,
        ),
      ),
      h("h3", {}, tr("annotatedPgn")),
      this.annotated,
      h("div", { class: "buttons" }, copyButton, downloadButton),
    );
    this.board.setPosition(START_FEN);
    document.addEventListener("keydown", (e) => {
      if (!this.shown || !ctrl.review) return;
      const ply = stepKey(e, ctrl.cursor, ctrl.fens.length - 1);
      if (ply === null) return;
      e.preventDefault();
      ctrl.goTo(ply);
    });
  }

  show(visible: boolean, pgn?: string, ply?: number): void {
    this.shown = visible;
    if (!visible || pgn === undefined) return;
    if (pgn !== this.ctrl.pgn) {
      this.input.value = pgn;
      void this.run(pgn, ply);
    } else if (ply !== undefined) this.ctrl.goTo(ply);
  }

  private async run(pgn: string, ply?: number): Promise<void> {
    this.errors.clear();
    this.runButton.disabled = true;
    this.progress.textContent = "…";
    try {
      await this.ctrl.run(pgn);
      this.showReview();
      if (ply !== undefined) this.ctrl.goTo(ply);
      this.onReviewed?.(pgn);
    } catch (e) {
      this.progress.textContent = "";
      this.errors.show(e);
    } finally {
      this.runButton.disabled = false;
    }
  }

  private showReview(): void {
    const review = this.ctrl.review;
    if (!review) return;
    const row = (p: PlayerReview | undefined, key: "white" | "black") =>
      h(
        "tr",
        {},
        h("th", {}, p?.name || t(key)),
        h("td", { class: "accuracy" }, p ? `${p.accuracy.toFixed(1)}%` : ""),
        h("td", { class: "acpl" }, p ? p.averageCentipawnLoss.toFixed(0) : ""),
        h("td", {}, p ? `?! ${p.inaccuracies} · ? ${p.mistakes} · ?? ${p.blunders}` : ""),
      );
    this.players.replaceChildren(
      h("tr", {}, h("th", {}), h("th", {}, t("accuracy")), h("th", {}, t("acpl")), h("th", {}, t("judgements"))),
      row(review.white, "white"),
      row(review.black, "black"),
    );
    const phases = this.ctrl.phaseAccuracy();
    const pct = (x: number | null) => (x === null ? "–" : `${x.toFixed(0)}%`);
    this.phases.replaceChildren(
      h("caption", {}, t("phases")),
      h("tr", {}, h("th", {}), h("th", {}, t("opening")), h("th", {}, t("middlegame")), h("th", {}, t("endgame"))),
      ...(["white", "black"] as const).map((side) =>
        h("tr", { "data-side": side }, h("th", {}, t(side)), ...(["opening", "middlegame", "endgame"] as const).map((p) => h("td", { "data-phase": p }, pct(phases[p][side])))),
      ),
    );
    this.opening.textContent = review.opening ? openingText(review.opening) : "";
    this.moveList.set(this.ctrl.fens[0] ?? START_FEN, this.ctrl.sans, review.moves.map((m) => m.symbol));
    this.drawGraph(review.moves);
    this.annotated.value = review.annotatedPgn;
    this.progress.textContent = `${review.moves.length} ${t("moves")} · ${review.nodes} ${t("nodes")} · ${review.timeMs} ms`;
    this.showCursor();
  }

  private showCursor(): void {
    const ctrl = this.ctrl;
    const ply = ctrl.cursor;
    const best = ctrl.bestAtCursor();
    this.board.setPosition(ctrl.fens[ply] ?? START_FEN, { lastMove: ctrl.ucis[ply - 1], arrows: best ? [best] : [] });
    this.moveList.mark(ply);
    const cursor = this.graph.querySelector(".graph-cursor");
    const n = Math.max(1, ctrl.review?.moves.length ?? 1);
    cursor?.setAttribute("x1", String((ply / n) * 600));
    cursor?.setAttribute("x2", String((ply / n) * 600));
    this.detail.replaceChildren();
    const move = ctrl.review?.moves[ply - 1];
    if (move) this.detail.append(...this.moveDetail(move));
  }

  /** The move at the cursor: its number, judgement, evaluation, and the better line. */
  private moveDetail(move: ReviewedMove): Array<Node | string> {
    const white = move.color === Color.WHITE;
    const san = move.move?.san ?? "";
    // A move that mates ends the game: no "#1" after it.
    const value = san.endsWith("#") ? t("checkmate") : scoreText(move.playedScore, white);
    const parts: Array<Node | string> = [
      `${moveNumberText(this.ctrl.fens[0] ?? START_FEN, move.ply)} ${localSan(san)}`,
      move.symbol ? h("span", { class: "symbol", "data-symbol": move.symbol }, ` ${move.symbol}`) : "",
      " ",
      h("span", { class: "eval" }, value),
    ];
    if (move.judgement >= Judgement.DUBIOUS && move.bestLine.length) {
      parts.push(" ", h("span", { class: "better" }, `${t("better")}: ${move.bestLine.slice(0, 6).map((m) => localSan(m.san)).join(" ")}`));
    }
    return parts;
  }

  private drawGraph(moves: ReviewedMove[]): void {
    const width = 600;
    const height = 120;
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", t("evaluation"));
    const n = Math.max(1, moves.length);
    // The evaluation after each move, from White's point of view, clamped to +-6 pawns.
    const y = (cp: number) => height / 2 - (Math.max(-600, Math.min(600, cp)) / 600) * (height / 2 - 4);
    let points = `0,${height} 0,${height / 2}`;
    moves.forEach((move, i) => {
      const cp = scoreCp(move.playedScore, move.color === Color.WHITE);
      points += ` ${((i + 1) / n) * width},${y(cp)}`;
    });
    points += ` ${width},${height}`;
    svg.innerHTML = `<rect width="${width}" height="${height}" class="graph-bg"/><polygon points="${points}" class="graph-area"/><line x1="0" x2="${width}" y1="${height / 2}" y2="${height / 2}" class="graph-mid"/><line class="graph-cursor" x1="0" x2="0" y1="0" y2="${height}"/>`;
    moves.forEach((move, i) => {
      if (move.judgement < Judgement.DUBIOUS) return;
      const cp = scoreCp(move.playedScore, move.color === Color.WHITE);
      const dot = document.createElementNS(SVG, "circle");
      dot.setAttribute("cx", String(((i + 1) / n) * width));
      dot.setAttribute("cy", String(y(cp)));
      dot.setAttribute("r", "4");
      dot.setAttribute("class", `graph-dot j${move.judgement}`);
      svg.append(dot);
    });
    svg.addEventListener("click", (e) => {
      const box = svg.getBoundingClientRect();
      this.ctrl.goTo(Math.round(((e.clientX - box.left) / box.width) * n));
    });
    this.graph.replaceChildren(svg);
  }
}
