import type { Queryable } from "../../store/db.js";
import { startSuiteBilling as startWallet } from "../../billing/public.js";

/**
 * What the sign-in part uses of the billing part: an organization linked with billing_mode=suite gets its suite
 * wallet (policy 'suite': deployment works at zero balance; GET /v1/billing/balance says suite_billed). Call it in
 * the linking transaction. (Admission and the report job also set it if linking did not.)
 */
export async function startSuiteBilling(q: Queryable, orgId: string): Promise<void> {
  await startWallet(q, { kind: "org", id: orgId });
}
