import type { ScopeTable } from "../auth/scopes.js";

/** The scope resources keys are granted on in this area (`resource:read|write|*`; instance-limited ones also `:{id|slug}`). */
export const STATIC_SCOPES = {
  static: { instances: true },
} as const satisfies ScopeTable;

// so route declarations (`scope: "static:write"`) type-check these resources everywhere
declare module "../auth/scopes.js" {
  interface AreaScopeTables {
    static: typeof STATIC_SCOPES;
  }
}
