import type { Db } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import { ApiError } from "../http/errors.js";
import { auditedTransaction } from "../audit/record.js";
import * as repo from "./repo.js";

export const MAX_REPORTS_PER_REQUEST = 20;
export const MAX_REQUEST_BYTES = 64 * 1024;
export const MAX_REPORTS_PER_DAY = 500;
const KEEP_DAYS = 30;

/**
 * Records the caller's client error reports, at most MAX_REPORTS_PER_DAY per account in 24 hours.
 * The count and the insert happen under one per-account lock, so two concurrent requests cannot both
 * slip under the limit.
 */
export async function recordCliErrors(db: Db, p: Principal, reports: unknown[]): Promise<void> {
  await auditedTransaction(db, p, async (tx) => {
    await repo.lockAccountReports(tx, p.accountId);
    const recent = await repo.countRecentReports(tx, p.accountId);
    if (recent + reports.length > MAX_REPORTS_PER_DAY) {
      throw new ApiError(
        "report_limit_exceeded",
        `At most ${MAX_REPORTS_PER_DAY} error reports per 24 hours; ${Math.max(0, MAX_REPORTS_PER_DAY - recent)} remain.`,
        { "retry-after": "3600" },
      );
    }
    await repo.insertReports(tx, { accountId: p.accountId, owner: p.owner, tokenId: p.tokenId, reports });
  });
}

/** Reports are kept for 30 days. */
export async function pruneCliErrorReports(db: Db): Promise<void> {
  await repo.deleteReportsOlderThan(db, KEEP_DAYS);
}
