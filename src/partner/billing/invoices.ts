/**
 * Monthly invoices (README.md here): each month before the current one becomes one invoice per partner that was
 * ever settled, once its last window is settled: a statement per child (the month's settlements), and as adjustment
 * the refunds and reductions credited to the partner's wallet before finalization that no earlier invoice subtracted
 * (at most the month's usage; the rest waits for the next invoice), total = usage - adjustment. Exactly once: one transaction per partner under its advisory lock, and the insert ends in ON CONFLICT
 * DO NOTHING on (partner, period_start). Missed months (platform down on the 1st) are caught up by every run.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Db } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import { creditsOf, meterIntervalMs, MICRO } from "../../billing/public.js";
import { monthOf } from "./settle.js";
import { recordEvent } from "../../events/public.js";
import { accountOwner } from "../../kernel/owner.js";
import * as repo from "./repo.js";

const monthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
const nextMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));

/** Finalizes every complete, fully settled month without an invoice; answers the invoices made. */
export async function finalizeDue(db: Db, now = new Date()): Promise<repo.InvoiceRow[]> {
  const settledUntil = await repo.lastSettledWindow(db);
  if (!settledUntil) return [];
  // a month is complete when its last window is settled
  const closedBefore = new Date(Math.min(monthStart(now).getTime(), settledUntil.getTime() + meterIntervalMs()));
  const made: repo.InvoiceRow[] = [];
  let failure: unknown = null;
  for (const p of await repo.invoicedPartners(db)) {
    const first = p.invoiced_until ?? monthStart(p.first_window!);
    if (nextMonth(first) > closedBefore) continue;
    try {
      made.push(...(await inTransaction(db, (tx) => finalizePartner(tx, p.partner_id, first, closedBefore))));
    } catch (err) {
      // one partner's failure does not hold back the others' invoices; the run still fails (and is retried)
      failure ??= err;
    }
  }
  if (failure) throw failure;
  return made;
}

async function finalizePartner(
  tx: pg.PoolClient,
  partnerId: string,
  from: Date,
  closedBefore: Date,
): Promise<repo.InvoiceRow[]> {
  await repo.lockPartnerInvoices(tx, partnerId);
  const credited = (await creditsOf(tx, { kind: "partner", id: partnerId })) * MICRO;
  const made: repo.InvoiceRow[] = [];
  for (let m = from; nextMonth(m) <= closedBefore; m = nextMonth(m)) {
    const end = nextMonth(m);
    const lines = await repo.settledPerChild(tx, partnerId, m, end);
    const usage = lines.reduce((s, l) => s + l.krw, 0) * MICRO;
    // a reduction larger than the month's usage is carried to the next invoice, never a negative total
    const adjustment = Math.max(0, Math.min(usage, credited - (await repo.adjustedSoFar(tx, partnerId))));
    const row = await repo.insertInvoice(tx, {
      id: randomUUID(),
      partner_id: partnerId,
      month: monthOf(m),
      period_start: m,
      period_end: end,
      status: usage - adjustment > 0 ? "unpaid" : "paid",
      usage,
      adjustment,
    });
    if (!row) continue;
    await repo.insertStatements(
      tx,
      row.id,
      lines.map((l) => ({ ...l, usage_micro: l.krw * MICRO })),
    );
    await recordEvent(tx, {
      type: "partner.settlement.finalized",
      owner: accountOwner(partnerId),
      resource: { kind: "invoice", id: row.id },
      data: { month: monthOf(m), children: lines.length, status: row.status },
    });
    made.push(row);
  }
  return made;
}
