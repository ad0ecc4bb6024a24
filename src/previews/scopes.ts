import type { ScopeTable } from "../auth/scopes.js";

/** The scope resource of preview environments (`previews:read|write|*`): links and the previews they make. */
export const PREVIEWS_SCOPES = {
  previews: { instances: false },
} as const satisfies ScopeTable;
