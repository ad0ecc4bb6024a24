/**
 * Partner postpaid billing as the partner module wires it (README.md here): the routes, and two jobs.
 * `partner.settle` runs every minute: it settles the windows due, finalizes any month still without its invoice
 * (so a platform down on the 1st still invoices), and sends the limit and unpaid-invoice mails.
 * `partner.invoices-finalize` runs at 00:15 UTC on the 1st, the month's first pass.
 */
import type { AppContext, Platform } from "../../kernel/context.js";
import type { JobSpec } from "../../kernel/contracts.js";
import { partnerBillingRoutes } from "./routes.js";
import { billingService } from "./service.js";
import { settleDue } from "./settle.js";
import { finalizeDue } from "./invoices.js";
import { sendLimitNotices, sendUnpaidNotices, type NoticeDeps } from "./notices.js";

export const SETTLE_JOB = "partner.settle";
export const FINALIZE_JOB = "partner.invoices-finalize";

export const billingRoutes = (ctx: AppContext) => partnerBillingRoutes(billingService(ctx.db));

export const noticeDeps = (p: Platform): NoticeDeps => ({
  db: p.db,
  mailer: p.kernel.mailer,
  log: p.log,
  operatorEmail: p.env.OPERATOR_EMAIL || null,
});

/** One pass of everything billing does for partners, in order; the first failure is thrown after the rest ran. */
export async function billingPass(p: Platform, now = new Date()): Promise<void> {
  let failure: unknown = null;
  const step = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      failure ??= err;
    }
  };
  await step(() => settleDue(p.db, now));
  await step(() => finalizeDue(p.db, now));
  await step(() => sendLimitNotices(noticeDeps(p), now));
  await step(() => sendUnpaidNotices(noticeDeps(p)));
  if (failure) throw failure;
}

export function billingJobs(p: Platform): JobSpec[] {
  return [
    { name: SETTLE_JOB, cron: "* * * * *", retryLimit: 0, expireInSeconds: 600, handler: () => billingPass(p) },
    { name: FINALIZE_JOB, cron: "15 0 1 * *", retryLimit: 3, expireInSeconds: 900, handler: () => billingPass(p) },
  ];
}
