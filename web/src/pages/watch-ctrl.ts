// The watch page's controller: WatchGame streams the state and then every change; a lost
// stream is noticed and reopened (the first message of a new stream is the current state, so
// nothing is missed). Clocks count down locally from the last state. No DOM here.

import { api, isAbort } from "../api.js";
import { Color } from "../gen/chess/v1/common_pb.js";
import { GameEvent_Kind, type GameState } from "../gen/chess/v1/rules_pb.js";

export type WatchStatus = "idle" | "waiting" | "live" | "reconnecting" | "over" | "failed";

export class WatchCtrl {
  gameId = "";
  state: GameState | null = null;
  receivedAt = 0;
  status: WatchStatus = "idle";
  changed: (what: "state" | "status" | "error", error?: unknown) => void = () => {};
  private watching: AbortController | null = null;

  async watch(gameId: string): Promise<void> {
    this.watching?.abort();
    this.gameId = gameId;
    this.state = null;
    if (!gameId) return;
    const controller = new AbortController();
    this.watching = controller;
    this.setStatus("waiting");
    let failures = 0;
    while (this.watching === controller) {
      try {
        for await (const event of api().games.watchGame({ gameId }, { signal: controller.signal })) {
          failures = 0;
          if (event.state) {
            this.state = event.state;
            this.receivedAt = performance.now();
            this.status = event.state.outcome ? "over" : "live";
            this.changed("state");
          }
          if (event.kind === GameEvent_Kind.GAME_OVER) break;
        }
        // The stream ends when the game is over.
        if (this.state?.outcome || this.watching !== controller) break;
      } catch (e) {
        if (isAbort(e) || controller.signal.aborted) return;
        const code = (e as { code?: number }).code;
        // NOT_FOUND, INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED: no point retrying.
        if (code === 5 || code === 3 || code === 7 || code === 16) {
          this.setStatus("failed");
          this.changed("error", e);
          return;
        }
        failures++;
        this.setStatus("reconnecting");
      }
      await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** Math.min(failures, 5))));
    }
  }

  stop(): void {
    this.watching?.abort();
    this.watching = null;
  }

  /** Milliseconds left on `color`'s clock now, counting down locally while it runs. */
  clockLeft(color: Color): { ms: number; running: boolean } | null {
    const state = this.state;
    if (!state?.clock) return null;
    const running = !state.outcome && state.clock.running === color && this.status === "live";
    const base = Number(color === Color.WHITE ? state.clock.whiteMs : state.clock.blackMs);
    return { ms: running ? base - (performance.now() - this.receivedAt) : base, running };
  }

  private setStatus(status: WatchStatus): void {
    this.status = status;
    this.changed("status");
  }
}
