// The analysis page's controller: the position (a start FEN and moves, checked by the rules
// service), the cursor in its moves, and the engine's lines for the position at the cursor.
// Analysis is continuous: while it is on, every new cursor position restarts AnalyzeStream
// (the old stream is cancelled); "no limit" asks for the deepest search the API has and
// starts it again when the server's time limit ends it, until stopped or left. No DOM here:
// the view (analysis-view.ts) draws what `changed` announces.

import { api, isAbort, isUnreachable } from "../api.js";
import { type BoardMove, START_FEN, looksLikeFen, readFen } from "../chess.js";
import type { OpeningInfo, Outcome } from "../gen/chess/v1/common_pb.js";
import type { AnalyzeResponse } from "../gen/chess/v1/search_pb.js";

/** The API's deepest depth (SearchLimits.depth is 1..=64): "no limit" asks for it, and the
 * server's own time limit ends the search, after which the page starts it again. */
export const NO_LIMIT_DEPTH = 64;

export interface AnalysisStateAtCursor {
  fen: string;
  legal: BoardMove[];
  check: boolean;
  outcome: Outcome | undefined;
  opening: OpeningInfo | undefined;
  winnability: { code: string; reasons: string[] };
}

export class AnalysisCtrl {
  startFen = START_FEN;
  moves: string[] = [];
  sans: string[] = [];
  fens: string[] = [START_FEN];
  cursor = 0;
  at: AnalysisStateAtCursor | null = null;
  lines: AnalyzeResponse | null = null;
  /** The position `lines` belong to. */
  linesFen = "";
  on = false;
  multipv = 3;
  depth = 16;
  reconnecting = false;
  restarts = 0;
  changed: (what: "position" | "lines" | "error", error?: unknown) => void = () => {};
  private running: AbortController | null = null;
  private loadSeq = 0;

  get fen(): string {
    return this.fens[this.cursor] ?? this.startFen;
  }

  /** Reads FEN, PGN or a move list, checks it with the rules service, and shows it. */
  async setUp(text: string): Promise<void> {
    const input = text.trim();
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
  }

  /** A start position and moves; the cursor goes to `ply` (default: the last move). */
  async load(startFen: string, moves: string[], ply?: number): Promise<void> {
    const converted = moves.length ? await api().rules.convertMoves({ fen: startFen, moves }) : null;
    this.startFen = startFen;
    this.moves = converted ? converted.moves.map((m) => m.uci) : [];
    this.sans = converted ? converted.moves.map((m) => m.san) : [];
    this.fens = [startFen, ...(converted?.fens ?? [])];
    await this.goTo(ply === undefined ? this.moves.length : ply);
  }

  /** Moves the cursor and shows that position (restarting the analysis when it is on). */
  async goTo(ply: number): Promise<void> {
    this.cursor = Math.max(0, Math.min(this.moves.length, ply));
    const seq = ++this.loadSeq;
    const fen = this.fen;
    const moves = this.moves.slice(0, this.cursor);
    const [legal, status, winnability] = await Promise.all([
      api().rules.legalMoves({ fen }),
      api().rules.positionStatus({ fen: this.startFen, moves }),
      api().rules.winnability({ fen }),
    ]);
    if (seq !== this.loadSeq) return;
    this.at = {
      fen,
      legal: legal.moves.map((m) => ({ uci: m.uci, san: m.san })),
      check: status.check,
      outcome: status.outcome,
      opening: status.opening,
      winnability: { code: winnability.code, reasons: winnability.sides.map((s) => s.reason).filter((r) => r) },
    };
    this.lines = null;
    this.changed("position");
    if (this.on) this.restart();
  }

  /** Plays moves from the cursor (the moves after it are dropped). */
  async play(ucis: string[]): Promise<void> {
    await this.load(this.startFen, [...this.moves.slice(0, this.cursor), ...ucis]);
  }

  toggle(): void {
    if (this.on) this.stop();
    else {
      this.on = true;
      this.restart();
    }
  }

  stop(): void {
    this.on = false;
    this.running?.abort();
    this.running = null;
    this.changed("lines");
  }

  /** Cancels the stream without turning the analysis off (the page was left). */
  pause(): void {
    this.running?.abort();
    this.running = null;
  }

  restart(): void {
    this.running?.abort();
    this.running = null;
    if (!this.on) return;
    void this.analyse();
  }

  private async analyse(): Promise<void> {
    const controller = new AbortController();
    this.running = controller;
    const fen = this.fen;
    const noLimit = this.depth === 0;
    this.restarts = 0;
    // A finished position has nothing to search: the view says how it ended.
    if (this.at?.outcome) {
      this.changed("lines");
      return;
    }
    const request = {
      fen: this.startFen,
      moves: this.moves.slice(0, this.cursor),
      limits: { depth: noLimit ? NO_LIMIT_DEPTH : this.depth },
      multipv: this.multipv,
    };
    for (let attempt = 0; attempt < 5 && this.running === controller; ) {
      try {
        let last: AnalyzeResponse | null = null;
        for await (const answer of api().analysis.analyzeStream(request, { signal: controller.signal })) {
          if (this.running !== controller) return;
          this.reconnecting = false;
          last = answer;
          // A restarted "no limit" search shows the deeper of the old and new lines.
          const keepOld = noLimit && this.linesFen === fen && (this.lines?.lines[0]?.depth ?? 0) > (answer.lines[0]?.depth ?? 0) && !answer.outcome;
          if (!keepOld) {
            this.lines = answer;
            this.linesFen = fen;
            this.changed("lines");
          }
        }
        if (!noLimit || last?.outcome || this.running !== controller) break;
        // The server's time limit ended it: go on.
        this.restarts++;
      } catch (e) {
        if (isAbort(e) || controller.signal.aborted) return;
        if (!isUnreachable(e)) {
          this.changed("error", e);
          break;
        }
        attempt++;
        this.reconnecting = true;
        this.changed("lines");
        await new Promise((r) => setTimeout(r, 1000 * attempt));
      }
    }
    if (this.running === controller) {
      this.running = null;
      if (!noLimit) this.changed("lines");
    }
  }

  /** Whether a search is running now. */
  get searching(): boolean {
    return this.running !== null;
  }
}
