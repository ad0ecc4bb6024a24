import type { ScopeTable } from "../auth/scopes.js";

/** `cron-jobs:read|write|*`, and `cron-jobs:<scope>:<id|name>` for instance-limited keys. */
export const CRON_SCOPES = {
  "cron-jobs": { instances: true },
} as const satisfies ScopeTable;
