import type { ScopeTable } from "../auth/scopes.js";

/** The scope resources keys are granted on in this area (`resource:read|write|*`; instance-limited ones also `:{id|slug}`). */
export const BILLING_SCOPES = {
  // in the company context the organization's wallet is for its admins and owner (org-context.ts)
  billing: { instances: false, guard: "orgWalletAdmins", guardErrors: ["forbidden_role"] },
} as const satisfies ScopeTable;
