import type { ScopeTable } from "../auth/scopes.js";

/** The scope resources keys are granted on in this area (`resource:read|write|*`; instance-limited ones also `:{id|slug}`). */
export const ORGS_SCOPES = {
  org: { instances: false },
} as const satisfies ScopeTable;

// so route declarations (`scope: "org:write"`) type-check these resources everywhere
declare module "../auth/scopes.js" {
  interface AreaScopeTables {
    orgs: typeof ORGS_SCOPES;
  }
}
