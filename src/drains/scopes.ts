import type { ScopeTable } from "../auth/scopes.js";

/** `drains:read|write`: log drains and their state. */
export const DRAINS_SCOPES = {
  drains: { instances: false },
} as const satisfies ScopeTable;

declare module "../auth/scopes.js" {
  interface AreaScopeTables {
    drains: typeof DRAINS_SCOPES;
  }
}
