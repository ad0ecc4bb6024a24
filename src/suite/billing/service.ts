import type { Principal } from "../../auth/principal.js";
import type { Platform } from "../../kernel/context.js";
import type { OrgMembership } from "../../orgs/public.js";
import { memberIds, roleAtLeast } from "../../orgs/public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { requireSuite, suiteOf } from "../state.js";
import * as repo from "./repo.js";
import { enforceOrg } from "./stop.js";

export const STOP_JOB = "suite.billing-stop";

/**
 * PUT/GET /v1/org/suite/billing. GET is for every member (decided: a member sees the setting and their own status,
 * to know why their apps stopped; admins and the owner see every member's), PUT for admins and the owner.
 */
export function suiteBillingService(p: Platform) {
  async function linked(m: OrgMembership) {
    requireSuite(suiteOf(p));
    const link = await repo.linkOf(p.db, m.orgId);
    if (!link) throw new ApiError("not_found", "The organization is not linked to a suite company.");
    return link;
  }

  async function status(p0: Principal, m: OrgMembership) {
    const link = await linked(m);
    const everyone = roleAtLeast(m.role, "admin");
    const ids = everyone ? await memberIds(p.db, m.orgId) : [p0.accountId];
    const [billing, reports] = await Promise.all([repo.memberBilling(p.db, m.orgId), repo.lastReports(p.db, m.orgId)]);
    const billingOf = new Map(billing.map((b) => [b.account_id, b]));
    const reportOf = new Map(reports.map((r) => [r.account_id, r]));
    const members = await Promise.all(
      [...ids].sort().map(async (accountId) => {
        const b = billingOf.get(accountId);
        const r = reportOf.get(accountId);
        const identity = await repo.identityOf(p.db, accountId, link.company_id);
        return {
          account_id: accountId,
          suite_user_id: identity?.subject ?? null,
          email: identity?.email ?? null,
          allowance:
            b && b.checked_at && b.limit_krw !== null
              ? {
                  limit_krw: b.limit_krw,
                  used_krw: b.used_krw ?? 0,
                  remaining_krw: b.remaining_krw ?? 0,
                  resets_at: b.resets_at?.toISOString() ?? null,
                  contact: b.contact,
                  checked_at: b.checked_at.toISOString(),
                }
              : null,
          paused: !!b?.paused_at,
          paused_at: b?.paused_at?.toISOString() ?? null,
          paused_resources: b?.paused_ids ?? [],
          last_report: r
            ? {
                hour: r.hour.toISOString(),
                amount_krw: r.amount_krw,
                status: r.status,
                reported_at: r.reported_at?.toISOString() ?? null,
                last_error: r.last_error,
              }
            : null,
        };
      }),
    );
    return { stop_on_exhausted: link.stop_on_exhausted, company_id: link.company_id, members };
  }

  /**
   * Turning it on checks every member soon (the stop job, sent now); turning it off resumes at once what the suite
   * paused (no call to the suite needed).
   */
  async function update(p0: Principal, m: OrgMembership, stopOnExhausted: boolean) {
    await linked(m);
    const link = await auditedTransaction(p.db, p0, async (tx) => {
      const current = await repo.linkOf(tx, m.orgId, true);
      if (!current) throw new ApiError("not_found", "The organization is not linked to a suite company.");
      await repo.setStopOnExhausted(tx, m.orgId, stopOnExhausted);
      return { ...current, stop_on_exhausted: stopOnExhausted };
    });
    if (stopOnExhausted) await p.jobs.send(STOP_JOB, { orgId: m.orgId }).catch(() => null);
    else await enforceOrg(p, requireSuite(suiteOf(p)).billing, link);
    return status(p0, m);
  }

  return { status, update };
}

export type SuiteBillingService = ReturnType<typeof suiteBillingService>;
