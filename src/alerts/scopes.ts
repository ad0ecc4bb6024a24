import type { ScopeTable } from "../auth/scopes.js";

/** `alert-rules:read|write|*`, and `alert-rules:<scope>:<id|name>` for instance-limited keys. */
export const ALERTS_SCOPES = {
  "alert-rules": { instances: true },
} as const satisfies ScopeTable;
