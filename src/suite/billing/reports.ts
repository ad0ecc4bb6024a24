/**
 * Usage reports (src/suite/README.md, "Billing"): usage of a suite-billed organization's company assets, summed per
 * member (the usage records' creator) and hour, is reported to the member's suite account, 1 unit = 1 KRW.
 *
 * Three steps, each committed before the next, so a kill -9 between any two ends with each member-hour reported once:
 * 1. write: per organization, under its cursor's row lock, each finished hour gets one row per member with usage:
 *    the exact micro-won, the carry in from the member's previous row, the whole KRW and the carry out (nothing lost
 *    or doubled); the cursor moves past the hour in the same transaction. A crash rolls the hour back whole.
 * 2. send: each pending row goes to the suite with the idempotency key (org, member, hour) and the amount stored in
 *    the row: a resend after a crash is the same record, which the suite counts once (it answers duplicate).
 * 3. mark: the row becomes reported and the amount is posted in the ledger (suite receivable → the organization's
 *    suite wallet, back toward zero) in one transaction, once (the row's status and the ledger key).
 * A failed send is retried later with the same key (back-off in the row). An hour is finished 5 minutes after it
 * ends, and the write waits for meter batches of its last interval still in flight (metering's advisory lock).
 */
import type { Db } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import {
  creditSuiteReport,
  lockMeterInterval,
  meterIntervalMs,
  MICRO,
  startSuiteBilling,
  suiteUsageByMember,
} from "../../billing/public.js";
import type { SuiteBilling } from "../provider.js";
import * as repo from "./repo.js";

export const HOUR_MS = 3_600_000;
/** an hour is reported this long after it ends (meter batches of its last interval have committed by then) */
export const FINISH_GRACE_MS = 5 * 60_000;

export const reportKey = (orgId: string, accountId: string, hour: Date) =>
  `suite-usage:${orgId}:${accountId}:${hour.toISOString()}`;

const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);
const orgOwner = (id: string): Owner => ({ kind: "org", id });

/** Test hooks: called after each step commits (a crash test kills the process there). */
export interface ReportHooks {
  afterWrite?: (orgId: string, hour: Date) => Promise<void> | void;
  afterSend?: (key: string) => Promise<void> | void;
  afterMark?: (key: string) => Promise<void> | void;
}

export interface ReportDeps {
  db: Db;
  billing: SuiteBilling;
  category: string;
  hooks?: ReportHooks;
}

/** Step 1 for one organization: rows for every finished hour since its cursor; the hours written. */
export async function writeReports(db: Db, link: repo.SuiteLinkRow, now = new Date(), hooks: ReportHooks = {}) {
  const last = hourOf(new Date(now.getTime() - FINISH_GRACE_MS - HOUR_MS));
  let written = 0;
  for (;;) {
    const hour = await inTransaction(db, async (tx) => {
      const h = await repo.lockCursor(tx, link.org_id, hourOf(link.created_at));
      if (h.getTime() > last.getTime()) return null;
      const end = new Date(h.getTime() + HOUR_MS);
      await lockMeterInterval(tx, new Date(end.getTime() - meterIntervalMs()));
      const usage = await suiteUsageByMember(tx, orgOwner(link.org_id), h, end);
      const carried = await repo.carries(
        tx,
        link.org_id,
        usage.map((u) => u.accountId),
      );
      for (const u of usage) {
        const carryIn = carried.get(u.accountId) ?? 0;
        const total = carryIn + u.micro;
        const krw = Math.floor(total / MICRO);
        await repo.insertReport(tx, {
          org_id: link.org_id,
          account_id: u.accountId,
          hour: h,
          usage_micro: u.micro,
          carry_in_micro: carryIn,
          amount_krw: krw,
          carry_out_micro: total - krw * MICRO,
          idempotency_key: reportKey(link.org_id, u.accountId, h),
          status: krw > 0 ? "pending" : "nothing",
        });
      }
      await repo.advanceCursor(tx, link.org_id, end);
      return h;
    });
    if (!hour) return written;
    written++;
    await hooks.afterWrite?.(link.org_id, hour);
  }
}

/** Steps 2 and 3 for the rows due (all organizations, or one): the number reported. */
export async function sendReports(
  d: ReportDeps,
  orgId: string | null = null,
): Promise<{ reported: number; failed: number }> {
  let reported = 0;
  let failed = 0;
  const rows = await repo.dueReports(d.db, 500, orgId);
  for (const row of rows) {
    const link = await repo.linkOf(d.db, row.org_id);
    const identity = link && (await repo.identityOf(d.db, row.account_id, link.company_id));
    if (!link || !identity) {
      // the member has no suite account to bill yet: kept pending, tried again after the back-off
      await repo.markFailed(d.db, row.idempotency_key, "the member has no suite identity in the linked company");
      failed++;
      continue;
    }
    let recordId: string;
    try {
      const receipt = await d.billing.reportUsage({
        companyId: link.company_id,
        userId: identity.subject,
        hour: row.hour,
        amountKrw: row.amount_krw,
        category: d.category,
        idempotencyKey: row.idempotency_key,
      });
      recordId = receipt.recordId;
    } catch (err) {
      await repo.markFailed(d.db, row.idempotency_key, (err as Error).message);
      failed++;
      continue;
    }
    await d.hooks?.afterSend?.(row.idempotency_key);
    await inTransaction(d.db, async (tx) => {
      const first = await repo.markReported(tx, row.idempotency_key, {
        recordId,
        companyId: link.company_id,
        userId: identity.subject,
      });
      if (first)
        await creditSuiteReport(tx, orgOwner(row.org_id), {
          key: row.idempotency_key,
          amountKrw: row.amount_krw,
          memo: `suite usage ${row.hour.toISOString()} reported`,
        });
    });
    await d.hooks?.afterMark?.(row.idempotency_key);
    reported++;
  }
  return { reported, failed };
}

/** The periodic job's work: rows for every suite-billed organization's finished hours, then every due row sent. */
export async function reportUsage(d: ReportDeps, now = new Date()) {
  let hours = 0;
  for (const link of await repo.suiteBilledOrgs(d.db)) {
    // the suite wallet, if linking did not set it: usage charged to it is what gets reported
    await startSuiteBilling(d.db, orgOwner(link.org_id));
    hours += await writeReports(d.db, link, now, d.hooks);
  }
  return { hours, ...(await sendReports(d)) };
}
