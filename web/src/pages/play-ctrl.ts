// The play page's controller: a game against the engine on the rules service (CreateGame,
// MakeMove, Resign, ClaimDraw, TakeBack: games against the engine are casual, so the engine
// grants every takeback), the engine's replies through the gateway's EngineMove, the
// server's clocks, and what the page remembers to resume a game after a reload (the game's
// id is in the address; which side the person plays and the engine's level are kept in
// localStorage by game id). No DOM here.

import { api } from "../api.js";
import { type BoardMove } from "../chess.js";
import { Color } from "../gen/chess/v1/common_pb.js";
import type { GameState } from "../gen/chess/v1/rules_pb.js";

const SAVED = "chess.games";

interface SavedGame {
  me: "w" | "b";
  elo: number;
}

function savedGames(): Record<string, SavedGame> {
  try {
    return JSON.parse(localStorage.getItem(SAVED) ?? "{}") as Record<string, SavedGame>;
  } catch {
    return {};
  }
}

function remember(id: string, game: SavedGame): void {
  const all = savedGames();
  all[id] = game;
  // Keep the last 20 games.
  const ids = Object.keys(all);
  for (const old of ids.slice(0, Math.max(0, ids.length - 20))) delete all[old];
  localStorage.setItem(SAVED, JSON.stringify(all));
}

export class PlayCtrl {
  state: GameState | null = null;
  receivedAt = 0;
  me: Color = Color.WHITE;
  elo = 1600;
  offerNext = false;
  /** Set when the engine moved while the person's draw offer stood: it declined. */
  declined = false;
  busy = false;
  legal: BoardMove[] = [];
  /** Who can still win the game in progress (the quick winnability code, `WB` when both). */
  winnability = { code: "WB", reasons: [] as string[] };
  changed: (what: "state" | "status" | "error", error?: unknown) => void = () => {};
  private flagCheck = 0;

  get playing(): boolean {
    return !!this.state && !this.state.outcome;
  }

  get myTurn(): boolean {
    return this.playing && this.state!.turn === this.me;
  }

  async start(choice: string, elo: number, timeControl: string): Promise<void> {
    this.me = choice === "b" || (choice === "r" && Math.random() < 0.5) ? Color.BLACK : Color.WHITE;
    this.elo = elo;
    const engineName = elo === 0 ? "Engine" : `Engine (${elo})`;
    this.offerNext = false;
    this.declined = false;
    const state = await api().games.createGame({
      timeControlText: timeControl,
      white: this.me === Color.WHITE ? "You" : engineName,
      black: this.me === Color.BLACK ? "You" : engineName,
      takebacks: true,
    });
    remember(state.gameId, { me: this.me === Color.WHITE ? "w" : "b", elo });
    await this.show(state);
    if (state.turn !== this.me) await this.engine();
  }

  /** Resumes a game of this browser by its id (after a reload or from a link); a game this
   * browser did not start is watched instead (returns false). */
  async resume(gameId: string): Promise<boolean> {
    const saved = savedGames()[gameId];
    if (!saved) return false;
    this.me = saved.me === "b" ? Color.BLACK : Color.WHITE;
    this.elo = saved.elo;
    this.offerNext = false;
    this.declined = false;
    const state = await api().games.getGame({ gameId });
    await this.show(state);
    if (!state.outcome && state.turn !== this.me) await this.engine();
    return true;
  }

  toggleOffer(): void {
    this.offerNext = !this.offerNext;
    this.changed("status");
  }

  async move(uci: string): Promise<void> {
    const state = this.state;
    if (!state || this.busy) return;
    this.busy = true;
    const offered = this.offerNext;
    try {
      const next = await api().games.makeMove({ gameId: state.gameId, move: uci, side: this.me, expectedPly: state.ply, offerDraw: offered });
      this.offerNext = false;
      this.declined = false;
      await this.show(next);
      this.busy = false;
      if (!next.outcome) await this.engine(offered);
    } catch (e) {
      this.busy = false;
      this.changed("error", e);
      await this.refresh();
    }
  }

  /** The engine's move: a time budget from its clock when there is one. The engine answers a
   * draw offer by playing on (FIDE 9.1.2.2: a move declines), which the page says. */
  async engine(offered = false): Promise<void> {
    const state = this.state;
    if (!state || state.outcome) return;
    this.busy = true;
    this.changed("status");
    // A level plays within its own budget; full strength thinks a share of its clock, or 1 s.
    let timeMs = this.elo === 0 ? 1000n : 0n;
    if (this.elo === 0 && state.clock && state.timeControl) {
      const left = Number(this.me === Color.WHITE ? state.clock.blackMs : state.clock.whiteMs);
      const increment = Number(state.timeControl.periods[0]?.incrementMs ?? 0n);
      timeMs = BigInt(Math.max(50, Math.min(5000, Math.floor(left / 40 + increment * 0.8))));
    }
    try {
      const answer = await api().gateway.engineMove({ gameId: state.gameId, strength: { elo: this.elo }, limits: { timeMs }, play: true });
      this.busy = false;
      if (answer.game) {
        this.declined = offered && !answer.game.outcome;
        await this.show(answer.game);
      }
    } catch (e) {
      this.busy = false;
      this.changed("error", e);
      await this.refresh();
    }
  }

  /** Whether the person has a move to take back now: the game is casual, running, the engine
   * is not thinking, and the person has moved. */
  get canTakeBack(): boolean {
    const state = this.state;
    if (!state || !this.playing || this.busy || !state.takebacks) return false;
    return state.ply >= (state.turn === this.me ? 2 : 1);
  }

  /** Takes back the person's last move (and the engine's reply): granted by the server in
   * this casual game and recorded in its log. */
  async takeBack(): Promise<void> {
    const state = this.state;
    if (!state || !this.canTakeBack) return;
    this.busy = true;
    try {
      const next = await api().games.takeBack({ gameId: state.gameId, side: this.me, expectedPly: state.ply });
      this.offerNext = false;
      this.declined = false;
      this.busy = false;
      await this.show(next);
    } catch (e) {
      this.busy = false;
      this.changed("error", e);
      await this.refresh();
    }
  }

  async claim(): Promise<void> {
    if (!this.state) return;
    await this.show(await api().games.claimDraw({ gameId: this.state.gameId, side: this.me }));
  }

  async resign(): Promise<void> {
    if (!this.state || this.state.outcome) return;
    await this.show(await api().games.resign({ gameId: this.state.gameId, side: this.me }));
  }

  async refresh(): Promise<void> {
    if (!this.state) return;
    try {
      await this.show(await api().games.getGame({ gameId: this.state.gameId }));
    } catch (e) {
      this.changed("error", e);
    }
  }

  /** Milliseconds left on `color`'s clock now, counting locally since the last state. */
  clockLeft(color: Color): { ms: number; running: boolean } | null {
    const state = this.state;
    if (!state?.clock) return null;
    const running = !state.outcome && state.clock.running === color;
    const base = Number(color === Color.WHITE ? state.clock.whiteMs : state.clock.blackMs);
    const ms = running ? base - (performance.now() - this.receivedAt) : base;
    // A flag has fallen by the local count: ask the server, which rules on it.
    if (running && ms <= 0 && performance.now() - this.flagCheck > 1000 && !this.busy) {
      this.flagCheck = performance.now();
      void this.refresh();
    }
    return { ms, running };
  }

  private async show(state: GameState): Promise<void> {
    let legal: BoardMove[] = [];
    const [moves, winnability] = await Promise.all([
      !state.outcome && state.turn === this.me ? api().rules.legalMoves({ fen: state.fen }) : null,
      // A side that can no longer mate: a flag fall against it would be a draw (FIDE 6.9).
      state.outcome ? null : api().rules.winnability({ fen: state.fen }).catch(() => null),
    ]);
    if (moves) legal = moves.moves.map((m) => ({ uci: m.uci, san: m.san }));
    this.winnability = winnability
      ? { code: winnability.code, reasons: winnability.sides.map((s) => s.reason).filter((r) => r) }
      : { code: "WB", reasons: [] };
    this.state = state;
    this.legal = legal;
    this.receivedAt = performance.now();
    this.flagCheck = 0;
    this.changed("state");
  }
}
