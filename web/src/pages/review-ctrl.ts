// The review page's controller: a PGN reviewed by ReviewGame, the positions of its moves
// (ConvertMoves), the cursor, and what the view derives from them: accuracy per phase, the
// next mistake, the best move at the cursor. No DOM here.

import { api } from "../api.js";
import { type Phase, START_FEN, phaseOf } from "../chess.js";
import { Color } from "../gen/chess/v1/common_pb.js";
import { Judgement, type ReviewGameResponse } from "../gen/chess/v1/search_pb.js";

export class ReviewCtrl {
  pgn = "";
  review: ReviewGameResponse | null = null;
  fens: string[] = [START_FEN];
  ucis: string[] = [];
  sans: string[] = [];
  cursor = 0;
  changed: () => void = () => {};

  async run(pgn: string): Promise<void> {
    const parsed = await api().rules.parsePgn({ pgn });
    const game = parsed.games[0];
    if (!game) throw new Error("no game in the PGN text");
    if (game.error) throw new Error(`PGN ${game.errorLine}:${game.errorColumn}: ${game.error}`);
    const start = game.startFen || START_FEN;
    const [review, converted] = await Promise.all([
      api().analysis.reviewGame({ pgn, gameIndex: 0 }),
      game.moves.length ? api().rules.convertMoves({ fen: start, moves: game.moves.map((m) => m.uci) }) : null,
    ]);
    this.pgn = pgn;
    this.review = review;
    this.fens = [start, ...(converted?.fens ?? [])];
    this.ucis = converted?.moves.map((m) => m.uci) ?? [];
    this.sans = converted?.moves.map((m) => m.san) ?? [];
    this.cursor = this.ucis.length;
    this.changed();
  }

  goTo(ply: number): void {
    this.cursor = Math.max(0, Math.min(this.fens.length - 1, ply));
    this.changed();
  }

  /** The next move judged ?!, ? or ?? after the cursor (wrapping round), or null. */
  nextMistake(): number | null {
    const moves = this.review?.moves ?? [];
    const bad = moves.filter((m) => m.judgement >= Judgement.DUBIOUS).map((m) => m.ply);
    return bad.find((p) => p > this.cursor) ?? bad[0] ?? null;
  }

  /** The engine's best move in the position at the cursor: the move it would have played
   * instead of the next one, or the next one itself when that was the best. */
  bestAtCursor(): string | null {
    const next = this.review?.moves[this.cursor];
    if (!next) return null;
    return next.bestMove?.uci || next.move?.uci || null;
  }

  /** Each side's mean move accuracy in the opening, middlegame and endgame (null: no move). */
  phaseAccuracy(): Record<Phase, { white: number | null; black: number | null }> {
    const sums: Record<Phase, { w: number[]; b: number[] }> = { opening: { w: [], b: [] }, middlegame: { w: [], b: [] }, endgame: { w: [], b: [] } };
    for (const m of this.review?.moves ?? []) {
      const phase = phaseOf(this.fens[m.ply - 1] ?? START_FEN);
      sums[phase][m.color === Color.WHITE ? "w" : "b"].push(m.accuracy);
    }
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    const out = {} as Record<Phase, { white: number | null; black: number | null }>;
    for (const phase of ["opening", "middlegame", "endgame"] as const) out[phase] = { white: mean(sums[phase].w), black: mean(sums[phase].b) };
    return out;
  }
}
