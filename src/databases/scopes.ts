import type { ScopeTable } from "../auth/scopes.js";

/** The scope resources keys are granted on in this area (`resource:read|write|*`; instance-limited ones also `:{id|slug}`). */
export const DATABASES_SCOPES = {
  databases: { instances: true },
  backups: { instances: false },
} as const satisfies ScopeTable;
