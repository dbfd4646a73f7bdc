// Game review: a PGN (pasted or uploaded) reviewed by ReviewGame: the evaluation graph, each
// move's judgement and the better line, accuracy and ACPL per side, the annotated PGN; a move
// clicked shows its position.

import { api } from "./api.js";
import { Board } from "./board.js";
import { START_FEN } from "./chess.js";
import { Color } from "./gen/chess/v1/common_pb.js";
import { Judgement, type PlayerReview, type ReviewGameResponse, type ReviewedMove } from "./gen/chess/v1/search_pb.js";
import { localSan, onLang, t } from "./i18n.js";
import { ErrorBox, copy, download, h, scoreCp, scoreText, tr } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";

export class ReviewView {
  readonly element: HTMLElement;
  private readonly board = new Board("review");
  private readonly errors = new ErrorBox();
  private readonly input = h("textarea", { name: "pgn", rows: 8, spellcheck: false });
  private readonly runButton = h("button", { type: "submit", name: "review" }, tr("review"));
  private readonly players = h("table", { class: "players" });
  private readonly graph = h("div", { class: "graph" });
  private readonly movesList = h("ol", { class: "review-moves" });
  private readonly annotated = h("textarea", { class: "pgn", readOnly: true, rows: 8, "aria-label": "PGN" });
  private readonly progress = h("p", { class: "info", "aria-live": "polite" });
  private fens: string[] = [];
  private ucis: string[] = [];

  constructor() {
    onLang(() => {
      this.input.setAttribute("aria-label", t("pgnText"));
    });
    const file = h("input", { type: "file", accept: ".pgn,text/plain", name: "upload" });
    file.addEventListener("change", async () => {
      const chosen = file.files?.[0];
      if (chosen) this.input.value = await chosen.text();
    });
    const form = h(
      "form",
      { class: "controls", onsubmit: (e: Event) => { e.preventDefault(); void this.run(); } },
      h("label", { class: "wide" }, tr("pgnText"), this.input),
      h("label", {}, tr("uploadPgn"), file),
      this.runButton,
    );
    const copyButton = h("button", { type: "button" }, tr("copyPgn"));
    copyButton.addEventListener("click", () => void copy(this.annotated.value, copyButton));
    const downloadButton = h("button", { type: "button" }, tr("downloadPgn"));
    downloadButton.addEventListener("click", () => download("review.pgn", this.annotated.value));
    this.element = h(
      "section",
      { class: "view review" },
      form,
      this.errors.element,
      this.progress,
      h(
        "div",
        { class: "table" },
        h("div", { class: "board-column" }, this.board.element),
        h("div", { class: "side" }, this.players, this.graph, h("p", { class: "legend" }, tr("judgementNames")), this.movesList),
      ),
      h("h3", {}, tr("annotatedPgn")),
      this.annotated,
      h("div", { class: "buttons" }, copyButton, downloadButton),
    );
    this.board.setPosition(START_FEN);
  }

  async run(): Promise<void> {
    this.errors.clear();
    this.runButton.disabled = true;
    this.progress.textContent = "…";
    const pgn = this.input.value;
    try {
      const parsed = await api().rules.parsePgn({ pgn });
      const game = parsed.games[0];
      if (!game) throw new Error("no game in the PGN text");
      if (game.error) throw new Error(`PGN ${game.errorLine}:${game.errorColumn}: ${game.error}`);
      const start = game.startFen || START_FEN;
      const [review, converted] = await Promise.all([
        api().analysis.reviewGame({ pgn, gameIndex: 0 }),
        game.moves.length ? api().rules.convertMoves({ fen: start, moves: game.moves.map((m) => m.uci) }) : null,
      ]);
      this.fens = [start, ...(converted?.fens ?? [])];
      this.ucis = converted?.moves.map((m) => m.uci) ?? [];
      this.show(review);
      this.progress.textContent = `${review.moves.length} ${t("moves")} · ${review.nodes} ${t("nodes")} · ${review.timeMs} ms`;
      this.select(this.fens.length - 1);
    } catch (e) {
      this.progress.textContent = "";
      this.errors.show(e);
    } finally {
      this.runButton.disabled = false;
    }
  }

  private show(review: ReviewGameResponse): void {
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
    this.drawGraph(review.moves);
    this.movesList.replaceChildren(...review.moves.map((move) => this.moveItem(move)));
    this.annotated.value = review.annotatedPgn;
  }

  private moveItem(move: ReviewedMove): HTMLLIElement {
    const white = move.color === Color.WHITE;
    const number = `${Math.ceil(move.ply / 2)}${white ? "." : "..."}`;
    const item = h(
      "li",
      { class: `judged j${move.judgement}`, "data-ply": String(move.ply) },
      h("button", { type: "button", onclick: () => this.select(move.ply) }, `${number} ${localSan(move.move?.san ?? "")}`),
      move.symbol ? h("span", { class: "symbol", "data-symbol": move.symbol }, move.symbol) : null,
      h("span", { class: "eval" }, scoreText(move.playedScore, white)),
    );
    // The better line for the moves judged ?!, ? or ?? (the server fills it for any move that
    // was not the engine's first choice).
    if (move.judgement >= Judgement.DUBIOUS && move.bestLine.length) {
      item.append(h("span", { class: "better" }, `${t("better")}: ${move.bestLine.slice(0, 6).map((m) => localSan(m.san)).join(" ")}`));
    }
    return item;
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
    // White's share is the light area from the bottom up to the curve.
    let points = `0,${height} 0,${height / 2}`;
    moves.forEach((move, i) => {
      const cp = scoreCp(move.playedScore, move.color === Color.WHITE);
      points += ` ${((i + 1) / n) * width},${y(cp)}`;
    });
    points += ` ${width},${height}`;
    svg.innerHTML = `<rect width="${width}" height="${height}" class="graph-bg"/><polygon points="${points}" class="graph-area"/><line x1="0" x2="${width}" y1="${height / 2}" y2="${height / 2}" class="graph-mid"/>`;
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
      this.select(Math.round(((e.clientX - box.left) / box.width) * n));
    });
    this.graph.replaceChildren(svg);
  }

  private select(ply: number): void {
    const index = Math.max(0, Math.min(this.fens.length - 1, ply));
    this.board.setPosition(this.fens[index] ?? START_FEN, { lastMove: this.ucis[index - 1] });
    for (const li of this.movesList.querySelectorAll("li")) li.classList.toggle("current", li.dataset.ply === String(index));
  }
}
