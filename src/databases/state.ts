import type { DatabaseProvider } from "./provider/types.js";

/** The databases area's per-process state, built by its module's setup. */
export interface DatabasesState {
  provider: DatabaseProvider;
  /** whether this platform's hosts can pool connections (PgBouncer installed) */
  poolAvailable: () => boolean;
  /** seconds a password rotation leaves the old sessions of the owner's apps alive (DB_APP_SESSION_GRACE_S) */
  appSessionGraceS?: number;
  /** whether point-in-time restore is performed (DB_RESTORE_ENABLED), or answers 501 restore_not_ready */
  restoreEnabled: boolean;
}
