/**
 * Billing mails (README.md here). The partner: when its children's settled usage this month crosses 80% and 100% of
 * the monthly limit, once per threshold and month (crossing both at once sends the 100% mail only). The operator
 * (OPERATOR_EMAIL): each invoice finalized unpaid, once. Unpaid invoices block nothing.
 * Each mail is claimed first (partner_billing_notices' key: one process wins) and sent after the claim committed; a
 * failed send gives the claim back so the next run retries; a crash between claim and send loses that one mail
 * rather than risking two.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import type { Mailer } from "../../kernel/contracts.js";
import { MICRO } from "../../billing/public.js";
import { monthOf } from "./settle.js";
import * as repo from "./repo.js";

export interface NoticeDeps {
  db: Db;
  mailer: Mailer;
  log: FastifyBaseLogger;
  /** where operator mails go; unset: no operator mail (the operator list still shows unpaid invoices) */
  operatorEmail: string | null;
}

const THRESHOLDS = [80, 100] as const;

async function sendOrRelease(
  deps: NoticeDeps,
  partnerId: string,
  kinds: string[],
  period: string,
  mail: { to: string; subject: string; text: string },
): Promise<boolean> {
  try {
    await deps.mailer.send(mail);
    return true;
  } catch (err) {
    deps.log.warn({ err, partner: partnerId, kinds }, "partner billing mail not sent; retried on the next run");
    await repo.releaseNotices(deps.db, partnerId, kinds, period);
    return false;
  }
}

/** This month's and, until its last windows are settled, the previous month's thresholds. */
export async function sendLimitNotices(deps: NoticeDeps, now = new Date()): Promise<number> {
  let sent = 0;
  const months = [monthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))), monthOf(now)];
  for (const month of months) sent += await limitNoticesOf(deps, month);
  return sent;
}

async function limitNoticesOf(deps: NoticeDeps, month: string): Promise<number> {
  let sent = 0;
  for (const p of await repo.monthAgainstLimits(deps.db, month)) {
    if (!p.email) continue;
    const crossed = THRESHOLDS.filter((t) => p.krw * 100 >= p.limit_krw * t).map((t) => `limit_${t}`);
    const claimed = await repo.claimNotices(deps.db, p.partner_id, crossed, month);
    if (!claimed.length) continue;
    const top = claimed.includes("limit_100") ? 100 : 80;
    const ok = await sendOrRelease(deps, p.partner_id, claimed, month, {
      to: p.email,
      subject: `${top}% of your partner monthly limit used (${month})`,
      text: [
        `Your children's usage settled in ${month} (UTC) is ${p.krw} KRW of your monthly limit of ${p.limit_krw} KRW.`,
        top === 100
          ? "New paid creation by your end users is refused with 402 partner_monthly_limit; running apps continue."
          : "At 100% new paid creation by your end users is refused (402 partner_monthly_limit); running apps continue.",
        "Ask the operator to raise the limit if you need more.",
      ].join("\n"),
    });
    if (ok) sent++;
  }
  return sent;
}

export async function sendUnpaidNotices(deps: NoticeDeps): Promise<number> {
  if (!deps.operatorEmail) return 0;
  let sent = 0;
  for (const inv of await repo.unnoticedUnpaid(deps.db)) {
    const claimed = await repo.claimNotices(deps.db, inv.partner_id, ["invoice_unpaid"], inv.id);
    if (!claimed.length) continue;
    const ok = await sendOrRelease(deps, inv.partner_id, claimed, inv.id, {
      to: deps.operatorEmail,
      subject: `Partner invoice ${inv.month} finalized unpaid: ${Number(inv.total_micro) / MICRO} ${inv.currency}`,
      text: [
        `Partner ${inv.partner_id}: invoice ${inv.id} for ${inv.month} was finalized with a total of`,
        `${Number(inv.total_micro) / MICRO} ${inv.currency} (usage ${Number(inv.usage_micro) / MICRO}, adjustment ${Number(inv.adjustment_micro) / MICRO}).`,
        "Nothing is blocked automatically. Unpaid invoices: GET /v1/operator/partner-invoices?status=unpaid;",
        `record a payment with POST /v1/operator/partner-invoices/${inv.id}/paid.`,
      ].join("\n"),
    });
    if (ok) sent++;
  }
  return sent;
}
