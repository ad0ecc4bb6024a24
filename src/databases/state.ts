import type { DatabaseProvider } from "./provider/types.js";
import type { DatabaseIdleService } from "./idle/service.js";

/** The databases area's per-process state, built by its module's setup. */
export interface DatabasesState {
  provider: DatabaseProvider;
  /** whether this platform's hosts can pool connections (PgBouncer installed) */
  poolAvailable: () => boolean;
  /** seconds a password rotation leaves the old sessions of the owner's apps alive (DB_APP_SESSION_GRACE_S) */
  appSessionGraceS?: number;
  /** whether point-in-time restore is performed (DB_RESTORE_ENABLED), or answers 501 restore_not_ready */
  restoreEnabled: boolean;
  /** scale-to-zero of dev databases (src/databases/idle); null where the provider cannot hold a wake front */
  idle?: DatabaseIdleService | null;
  /** DB_IDLE_MIN_SECONDS (60): the shortest idle_stop_seconds accepted */
  idleMinSeconds?: number;
  /** DB_WAKE_SYNC_MS (1000): how often each worker process brings its wake fronts in step with the store */
  wakeSyncMs?: number;
}
