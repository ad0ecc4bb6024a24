/**
 * Finalising organization invoices from the ledger: each complete UTC month since the card's registration becomes
 * one invoice (the first month from the registration itself), and removing the card closes the month so far.
 * Exactly once per organization and period start: each organization is finalised in one transaction holding its
 * advisory lock, and the insert ends in ON CONFLICT DO NOTHING on the unique (org_id, period_start), so two workers,
 * repeated runs and restarts all leave one invoice.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Db } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { creditInvoicePayment, periodUsage, savedCard, type PaymentDeps } from "../../billing/public.js";
import { recordEvent } from "../../events/public.js";
import * as repo from "./repo.js";

export interface FinalizeDeps {
  db: Db;
  payments: PaymentDeps;
}

export const orgOwner = (id: string): Owner => ({ kind: "org", id });

const monthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
const nextMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
export const monthOf = (d: Date) => d.toISOString().slice(0, 7);

/** The periods still to invoice for a registration: whole months before `now`'s, and with `closing` the month so far. */
export function duePeriods(
  registeredAt: Date,
  now: Date,
  closing: boolean,
): { start: Date; end: Date; kind: repo.InvoiceKind }[] {
  const out: { start: Date; end: Date; kind: repo.InvoiceKind }[] = [];
  const current = monthStart(now);
  for (let m = monthStart(registeredAt); m < current; m = nextMonth(m)) {
    const start = registeredAt > m ? registeredAt : m;
    const end = nextMonth(m);
    if (start < end) out.push({ start, end, kind: "monthly" });
  }
  if (closing) {
    const start = registeredAt > current ? registeredAt : current;
    if (start < now) out.push({ start, end: now, kind: "closing" });
  }
  return out;
}

/** The smallest total charged to a card (the providers' minimum, 100 KRW); a smaller one is waived. */
export const MIN_CHARGE_KRW = 100;

/** A total under the minimum charge: paid by the platform (billing's adjustments wallet), not the card. */
async function waive(tx: pg.PoolClient, row: repo.InvoiceRow): Promise<repo.InvoiceRow> {
  const txId = await creditInvoicePayment(tx, orgOwner(row.org_id), {
    id: row.id,
    amountKrw: row.total_krw,
    memo: `invoice ${row.month} waived (under ${MIN_CHARGE_KRW} KRW)`,
    waived: true,
  });
  return repo.updateInvoice(tx, row.id, { waived: true, payment_transaction_id: txId });
}

/**
 * Inside the caller's transaction, which holds the organization's lock: the invoices the registration still owes,
 * from the ledger's usage postings on the organization wallet and the usage records behind them. An invoice of 0
 * KRW is recorded paid, one under the minimum charge paid and waived; others wait for the charge job (due at once).
 */
export async function finalizeIn(
  tx: pg.PoolClient,
  deps: FinalizeDeps,
  billing: repo.CardBillingRow,
  now: Date,
  closing = false,
): Promise<repo.InvoiceRow[]> {
  const owner = orgOwner(billing.org_id);
  const have = await repo.periodStarts(tx, billing.org_id, billing.registered_at);
  const missing = duePeriods(billing.registered_at, now, closing).filter((p) => !have.has(p.start.getTime()));
  if (!missing.length) return [];
  const card = await savedCard(deps.payments, owner, tx);
  const created: repo.InvoiceRow[] = [];
  for (const p of missing) {
    const usage = await periodUsage(tx, owner, p.start, p.end);
    const row = await repo.insertInvoice(tx, {
      id: randomUUID(),
      org_id: billing.org_id,
      month: monthOf(p.start),
      kind: p.kind,
      period_start: p.start,
      period_end: p.end,
      total_krw: usage.totalKrw,
      status: usage.totalKrw >= MIN_CHARGE_KRW ? "pending" : "paid",
      next_attempt_at: usage.totalKrw >= MIN_CHARGE_KRW ? now : null,
      paid_at: usage.totalKrw >= MIN_CHARGE_KRW ? null : now,
      card_provider: card?.provider ?? null,
      card_brand: card?.brand ?? null,
      card_last4: card?.last4 ?? null,
    });
    if (!row) continue;
    await repo.insertLines(tx, row.id, usage.lines);
    await recordEvent(tx, {
      type: "invoice.finalized",
      owner,
      resource: { kind: "invoice", id: row.id },
      data: { month: row.month, kind: row.kind, total_krw: row.total_krw, status: row.status },
    });
    created.push(usage.totalKrw > 0 && usage.totalKrw < MIN_CHARGE_KRW ? await waive(tx, row) : row);
  }
  return created;
}

/**
 * The finalize job's pass (and every charge pass's catch-up): every organization paying by card gets the invoices
 * of its complete months that are missing, whatever runs were missed. One transaction per organization.
 */
export async function finalizeDue(deps: FinalizeDeps, now = new Date()): Promise<{ created: number }> {
  let created = 0;
  let failure: unknown = null;
  for (const candidate of await repo.cardOrgs(deps.db)) {
    try {
      created += await inTransaction(deps.db, async (tx) => {
        await repo.lockOrgBilling(tx, candidate.org_id);
        // read again under the lock: the card may have been removed (its closing invoice made) meanwhile
        const billing = await repo.findCardBilling(tx, candidate.org_id);
        if (!billing) return 0;
        return (await finalizeIn(tx, deps, billing, now)).length;
      });
    } catch (err) {
      // one organization's failure does not hold the others' invoices back; the run still fails (and is retried)
      failure ??= err;
    }
  }
  if (failure) throw failure;
  return { created };
}
