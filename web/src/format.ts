// Text for numbers the pages show: clocks, scores, depths. Pure (no DOM), unit-tested.

/** A score as the API sends it (chess.v1.Score), structurally, so this file needs no
 * generated code. */
export interface ScoreLike {
  value: { case: "mateIn"; value: number } | { case: "centipawns"; value: number } | { case: undefined; value?: undefined };
}

/** Formats milliseconds as m:ss (or h:mm:ss), tenths under ten seconds. */
export function clockText(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) return (Math.floor(clamped / 100) / 10).toFixed(1);
  const total = Math.floor(clamped / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** A score as text from White's point of view (`whiteToMove` says whose view it was in):
 * `+0.35`, `-1.20`, `#3`, `#-2`; a side already mated (mate in 0) is `#` with no number. */
export function scoreText(score: ScoreLike | undefined, whiteToMove: boolean): string {
  if (!score) return "";
  const sign = whiteToMove ? 1 : -1;
  if (score.value.case === "mateIn") {
    if (score.value.value === 0) return "#";
    const m = score.value.value * sign;
    return m > 0 ? `#${m}` : `#-${-m}`;
  }
  if (score.value.case === "centipawns") {
    const cp = (score.value.value * sign) / 100;
    return (cp > 0 ? "+" : "") + cp.toFixed(2);
  }
  return "";
}

/** A score as centipawns from White's point of view, mates as +-1000 (for bars and graphs).
 * Mate in 0 means the side to move is mated. */
export function scoreCp(score: ScoreLike | undefined, whiteToMove: boolean): number {
  if (!score) return 0;
  const sign = whiteToMove ? 1 : -1;
  if (score.value.case === "mateIn") return (score.value.value > 0 ? 1000 : -1000) * sign;
  if (score.value.case === "centipawns") return Math.max(-1000, Math.min(1000, score.value.value)) * sign;
  return 0;
}

/** The short number on the evaluation bar: `+0.3`, `-2.1`, `M3`, `-M2`. */
export function barText(score: ScoreLike | undefined, whiteToMove: boolean): string {
  if (!score) return "";
  const sign = whiteToMove ? 1 : -1;
  if (score.value.case === "mateIn") {
    if (score.value.value === 0) return "#";
    const m = score.value.value * sign;
    return m > 0 ? `M${m}` : `-M${-m}`;
  }
  if (score.value.case === "centipawns") {
    const cp = (score.value.value * sign) / 100;
    return (cp > 0 ? "+" : "") + cp.toFixed(1);
  }
  return "";
}

/** White's share of the evaluation bar in percent, from the WDL (permille, side to move) when
 * there is one, else from the score. */
export function whiteShare(score: ScoreLike | undefined, wdl: { win: number; draw: number; loss: number } | undefined, whiteToMove: boolean): number {
  if (score?.value.case === "mateIn") return scoreCp(score, whiteToMove) > 0 ? 100 : 0;
  if (wdl && wdl.win + wdl.draw + wdl.loss > 0) {
    const own = (wdl.win + wdl.draw / 2) / 10;
    return whiteToMove ? own : 100 - own;
  }
  return 100 / (1 + Math.exp(-scoreCp(score, whiteToMove) / 250));
}

/** `20` or `20/27`: the depth, and the selective depth only when it goes deeper (a search
 * cut short by the table can report a selective depth below the nominal one). */
export function depthText(depth: number, seldepth: number): string {
  return seldepth > depth ? `${depth}/${seldepth}` : String(depth);
}

/** Who mates and in how many moves, from a table line's `dtmPlies` (half-moves to mate,
 * positive when the side to move mates): `null` for a table draw. */
export function tableMate(dtmPlies: number | undefined, whiteToMove: boolean): { white: boolean; moves: number } | null {
  if (dtmPlies === undefined || dtmPlies === 0) return null;
  const moverMates = dtmPlies > 0;
  return { white: moverMates === whiteToMove, moves: Math.ceil(Math.abs(dtmPlies) / 2) };
}
