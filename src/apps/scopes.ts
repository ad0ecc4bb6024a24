import type { ScopeTable } from "../auth/scopes.js";

/** The scope resources keys are granted on in this area (`resource:read|write|*`; instance-limited ones also `:{id|slug}`). */
export const APPS_SCOPES = {
  pods: { instances: true },
  volumes: { instances: true },
  "pod-templates": { instances: true },
  "linked-apps": { instances: false },
} as const satisfies ScopeTable;
