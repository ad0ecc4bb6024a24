import type { ScopeTable } from "../auth/scopes.js";

/** The scope resources keys are granted on in this area (`resource:read|write|*`; instance-limited ones also `:{id|slug}`). */
export const PARTNER_SCOPES = {
  // every /v1/partner route: the caller is a partner account acting for itself (guard.ts)
  partner: { instances: false, guard: "partnerAccount", guardErrors: ["partner_required"] },
} as const satisfies ScopeTable;
