import type { Db } from "../../store/db.js";
import type { DatabaseProvider } from "../provider/types.js";
import { isWakeCapable } from "../provider/wake.js";
import type * as repo from "../repo.js";
import { keepAwake } from "./repo.js";

type Output = { patch?: Partial<repo.DatabaseRow>; result?: Record<string, unknown> };

/**
 * The idle stop (issue 30), run by the command job like every server change: a client that connected since the
 * sweep decided keeps the instance running; otherwise the server stops (as a stop does: the pooler too) and this
 * process listens on its ports at once, so the next connection starts it (wake-front.ts).
 */
export function idleExecutors(provider: DatabaseProvider, db: Db) {
  return {
    idle_stop: async (row: repo.DatabaseRow): Promise<Output> => {
      if (isWakeCapable(provider)) {
        const sessions = await provider.clientSessions(row.id).catch(() => 0);
        if (sessions > 0) {
          await keepAwake(db, row.id);
          return { result: { kept_running: true, sessions } };
        }
      }
      await provider.stop(row.id);
      if (isWakeCapable(provider)) await provider.holdForWake(row.id).catch(() => false);
      return { patch: { state: "idle_stopped" } as Partial<repo.DatabaseRow> };
    },
  };
}
