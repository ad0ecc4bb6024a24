import type { SuiteAllowance, SuiteBilling, SuiteUsageReceipt, SuiteUsageRecord } from "../provider.js";
import { SuiteApiError, suiteUnavailable, type SuiteApiClient } from "./api-client.js";

/** GET /metering/v1/allowances/{userId}?companyId= (README.md here, "The suite's API shape", metering). */
interface AllowanceBody {
  limit: number;
  used: number;
  remaining: number;
  resetsAt: string | null;
  contact: string | null;
}

const wholeKrw = (v: unknown, what: string): number => {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`the allowance's ${what} is not a number`);
  return Math.trunc(v);
};

/**
 * The marketplace-style metering API (in the manner of AWS Marketplace metering and usage-record APIs): usage records
 * posted with an Idempotency-Key (the same key again answers the first record, counted once), and the member's
 * allowance. Every failure is the caller's 503 suite_unavailable (never a 500); a member the suite does not list is
 * an allowance of null.
 */
export function meteringBilling(api: SuiteApiClient, category: string): SuiteBilling {
  async function allowance(companyId: string, userId: string): Promise<SuiteAllowance | null> {
    let body: AllowanceBody;
    try {
      body = await api.call<AllowanceBody>(
        "GET",
        `/metering/v1/allowances/${encodeURIComponent(userId)}?companyId=${encodeURIComponent(companyId)}`,
      );
    } catch (err) {
      if (err instanceof SuiteApiError && err.status === 404) return null;
      throw suiteUnavailable(err);
    }
    try {
      const resetsAt = body.resetsAt ? new Date(body.resetsAt) : null;
      return {
        limitKrw: wholeKrw(body.limit, "limit"),
        usedKrw: wholeKrw(body.used, "used"),
        remainingKrw: wholeKrw(body.remaining, "remaining"),
        resetsAt: resetsAt && !Number.isNaN(resetsAt.getTime()) ? resetsAt : null,
        contact: typeof body.contact === "string" && body.contact ? body.contact : null,
      };
    } catch (err) {
      throw suiteUnavailable(err);
    }
  }

  async function reportUsage(record: SuiteUsageRecord): Promise<SuiteUsageReceipt> {
    try {
      const body = await api.call<{ recordId: string; duplicate: boolean }>(
        "POST",
        "/metering/v1/usage-records",
        {
          companyId: record.companyId,
          userId: record.userId,
          category: record.category || category,
          quantity: record.amountKrw,
          unit: "KRW",
          hour: record.hour.toISOString(),
        },
        { "idempotency-key": record.idempotencyKey },
      );
      if (!body || typeof body.recordId !== "string") throw new Error("the usage record's answer has no recordId");
      return { recordId: body.recordId, duplicate: body.duplicate === true };
    } catch (err) {
      throw suiteUnavailable(err);
    }
  }

  return { allowance, reportUsage };
}
