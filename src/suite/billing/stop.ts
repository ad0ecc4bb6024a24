/**
 * Stop on exhausted (src/suite/README.md, "Billing"): with the organization's `stop_on_exhausted` on, each member
 * with company assets has their allowance looked up; an exhausted member's paid company apps (pods, the members of
 * their pod groups) are paused and paid databases stopped through the kernel's member lifecycle, with the reason
 * SUITE_PAUSE_REASON (a resume touches only what this reason paused: an overdue pause, or a stop by hand, is never
 * undone here). When the allowance is back, or the setting is turned off, they are resumed. Free sizes keep running:
 * they use no allowance. A member the suite cannot be asked about (no login, the suite down) is left as they are.
 */
import type { Platform } from "../../kernel/context.js";
import type { Owner } from "../../kernel/owner.js";
import { inTransaction } from "../../store/db.js";
import { startSuiteBilling } from "../../billing/public.js";
import type { SuiteBilling } from "../provider.js";
import * as repo from "./repo.js";

export const SUITE_PAUSE_REASON = "suite allowance used up (stop_on_exhausted)";

const orgOwner = (id: string): Owner => ({ kind: "org", id });

export interface StopResult {
  paused: string[];
  resumed: string[];
  errors: number;
}

/** Pauses the member's company assets (or those started since the last pause); returns the ids paused. */
async function pauseMember(p: Platform, orgId: string, accountId: string): Promise<string[]> {
  return inTransaction(p.db, async (tx) => {
    await repo.lockMember(tx, orgId, accountId);
    const ids = await p.kernel.pauseMember(tx, orgOwner(orgId), accountId, SUITE_PAUSE_REASON);
    if (ids.length) await repo.markPaused(tx, orgId, accountId, ids);
    return ids;
  });
}

/** Resumes what the suite paused of the member; returns the ids resumed. */
export async function resumeMember(p: Platform, orgId: string, accountId: string): Promise<string[]> {
  return inTransaction(p.db, async (tx) => {
    const { paused } = await repo.lockMember(tx, orgId, accountId);
    if (!paused) return [];
    const ids = await p.kernel.resumeMember(tx, orgOwner(orgId), accountId, SUITE_PAUSE_REASON);
    await repo.markResumed(tx, orgId, accountId);
    return ids;
  });
}

/** The members whose company assets use allowance now (billable: running or keeping data), by creator. */
async function membersWithAssets(p: Platform, orgId: string): Promise<Set<string>> {
  const members = new Set<string>();
  for (const source of p.kernel.metering)
    for (const r of await source.billableOf(p.db, orgOwner(orgId))) members.add(r.accountId);
  return members;
}

/** One organization's members checked against their allowances. */
export async function enforceOrg(p: Platform, billing: SuiteBilling, link: repo.SuiteLinkRow): Promise<StopResult> {
  const out: StopResult = { paused: [], resumed: [], errors: 0 };
  const paused = new Set(await repo.pausedMembers(p.db, link.org_id));
  if (!link.stop_on_exhausted) {
    for (const accountId of paused) out.resumed.push(...(await resumeMember(p, link.org_id, accountId)));
    return out;
  }
  const members = new Set([...(await membersWithAssets(p, link.org_id)), ...paused]);
  for (const accountId of [...members].sort()) {
    const identity = await repo.identityOf(p.db, accountId, link.company_id);
    if (!identity) continue;
    try {
      const allowance = await billing.allowance(link.company_id, identity.subject);
      if (!allowance) continue;
      await repo.saveAllowance(p.db, link.org_id, accountId, allowance);
      if (allowance.remainingKrw <= 0) out.paused.push(...(await pauseMember(p, link.org_id, accountId)));
      else if (paused.has(accountId)) out.resumed.push(...(await resumeMember(p, link.org_id, accountId)));
    } catch {
      out.errors++;
    }
  }
  return out;
}

/** The periodic job's work: every suite-billed organization. */
export async function enforceAll(p: Platform, billing: SuiteBilling): Promise<StopResult> {
  const out: StopResult = { paused: [], resumed: [], errors: 0 };
  for (const link of await repo.suiteBilledOrgs(p.db)) {
    // the suite wallet, if linking did not set it (deployment at zero balance, suite_billed)
    await startSuiteBilling(p.db, orgOwner(link.org_id));
    const r = await enforceOrg(p, billing, link);
    out.paused.push(...r.paused);
    out.resumed.push(...r.resumed);
    out.errors += r.errors;
  }
  return out;
}
