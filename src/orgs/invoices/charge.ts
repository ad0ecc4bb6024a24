/**
 * Charging finalised invoices to the organization's saved card, once each. An attempt is claimed first (its number
 * committed with the claim), then the card is charged with that attempt's idempotency key and order id, then the
 * outcome is settled under the invoice's row lock. A worker dying in between leaves the claim; once stale it is
 * retried with the same number, so the provider answers the first try's outcome instead of charging twice. A
 * decline backs off (1 h, 4 h, 12 h, 24 h, 24 h) and the sixth is final: the invoice is `failed` until another card
 * is registered. Paid: the organization's wallet is credited by the total in the same transaction.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import { inTransaction } from "../../store/db.js";
import {
  chargeCard,
  creditInvoicePayment,
  savedCard,
  type CardInfo,
  type ChargeOutcome,
  type PaymentDeps,
} from "../../billing/public.js";
import { orgOwner } from "./finalize.js";
import * as repo from "./repo.js";

export interface ChargeDeps {
  db: Db;
  payments: PaymentDeps;
  log: FastifyBaseLogger;
}

/** Hours to wait after the 1st, 2nd ... decline; the decline after the last is final. */
export const RETRY_HOURS = [1, 4, 12, 24, 24] as const;
export const MAX_ATTEMPTS = RETRY_HOURS.length + 1;
/** A claimed attempt without an outcome this long is tried again (with its own keys). */
export const STALE_MS = 10 * 60_000;
const BATCH = 100;
const HOUR = 3_600_000;

/** The provider keys of one attempt: the same for every try of it, new for the next attempt. */
export const attemptKeys = (invoiceId: string, attempt: number) => ({
  orderId: `inv-${invoiceId}-${attempt}`,
  idempotencyKey: `org-invoice-${invoiceId}-attempt-${attempt}`,
});

const cardFields = (card: CardInfo | null) =>
  card ? { card_provider: card.provider, card_brand: card.brand, card_last4: card.last4 } : {};

/** Settles one attempt's outcome, unless the invoice moved on meanwhile (settled, or a later attempt claimed). */
async function settle(
  deps: ChargeDeps,
  claimed: repo.InvoiceRow,
  card: CardInfo | null,
  outcome: ChargeOutcome,
  now: Date,
): Promise<repo.InvoiceRow> {
  return inTransaction(deps.db, async (tx) => {
    const inv = await repo.lockInvoice(tx, claimed.id);
    if (!inv || inv.status !== "pending" || inv.attempts !== claimed.attempts || !inv.charging_since) return inv!;
    if (outcome.status === "paid") {
      const txId = await creditInvoicePayment(tx, orgOwner(inv.org_id), {
        id: inv.id,
        amountKrw: inv.total_krw,
        memo: `invoice ${inv.month} paid by card`,
      });
      return repo.updateInvoice(tx, inv.id, {
        status: "paid",
        paid_at: now,
        payment_transaction_id: txId,
        provider_ref: outcome.providerRef,
        charging_since: null,
        next_attempt_at: null,
        failure_code: null,
        failure_message: null,
        ...cardFields(card),
      });
    }
    if (outcome.status === "unknown") {
      // the claim stays: once stale, this attempt is asked again with the same keys
      return repo.updateInvoice(tx, inv.id, {
        provider_ref: outcome.providerRef ?? inv.provider_ref,
        failure_code: "no_answer",
        failure_message: outcome.message,
        ...cardFields(card),
      });
    }
    const failures = inv.failures + 1;
    const final = failures >= MAX_ATTEMPTS;
    return repo.updateInvoice(tx, inv.id, {
      status: final ? "failed" : "pending",
      failures,
      next_attempt_at: final ? null : new Date(now.getTime() + RETRY_HOURS[failures - 1] * HOUR),
      charging_since: null,
      failure_code: outcome.code,
      failure_message: outcome.message,
      provider_ref: outcome.providerRef,
      ...cardFields(card),
    });
  });
}

/**
 * Makes the claimed attempt: one charge call with the attempt's keys, then its settlement. The card is pinned to the
 * attempt before the call, so a retry of it charges the same card whatever was registered meanwhile.
 */
async function attempt(deps: ChargeDeps, inv: repo.InvoiceRow, now: Date): Promise<repo.InvoiceRow> {
  const owner = orgOwner(inv.org_id);
  let cardId = inv.attempt_card_id;
  if (!cardId) {
    cardId = (await savedCard(deps.payments, owner))?.id ?? null;
    if (cardId) await repo.pinAttemptCard(deps.db, inv.id, inv.attempts, cardId);
  }
  const { card, outcome } = await chargeCard(deps.payments, owner, {
    cardId,
    amountKrw: inv.total_krw,
    ...attemptKeys(inv.id, inv.attempts),
    orderName: `Platform invoice ${inv.month}`,
    metadata: { org_invoice_id: inv.id, org_id: inv.org_id },
    known: inv.provider_ref && inv.card_provider ? { provider: inv.card_provider, ref: inv.provider_ref } : null,
  });
  if (outcome.status !== "paid")
    deps.log.warn({ invoice: inv.id, attempt: inv.attempts, outcome }, "organization invoice charge not paid");
  return settle(deps, inv, card, outcome, now);
}

/** The charge job's pass: every due invoice (and every stale attempt) is charged once. */
export async function chargeDue(deps: ChargeDeps, now = new Date()): Promise<{ paid: number; declined: number }> {
  const result = { paid: 0, declined: 0 };
  for (;;) {
    const claimed = await repo.claimDue(deps.db, now, new Date(now.getTime() - STALE_MS), BATCH);
    for (const inv of claimed) {
      const after = await attempt(deps, inv, now).catch((err: unknown) => {
        deps.log.error({ err, invoice: inv.id }, "organization invoice charge failed; retried when stale");
        return null;
      });
      if (after?.status === "paid") result.paid++;
      else if (after && !after.charging_since) result.declined++;
    }
    if (claimed.length < BATCH) return result;
  }
}

/** Charges one pending invoice now (card removal), if it is due; answers the invoice as it ends. */
export async function chargeNow(deps: ChargeDeps, inv: repo.InvoiceRow, now = new Date()): Promise<repo.InvoiceRow> {
  const [claimed] = await repo.claimDue(deps.db, now, new Date(now.getTime() - STALE_MS), 1, inv.id);
  return claimed ? attempt(deps, claimed, now) : ((await repo.findInvoice(deps.db, inv.org_id, inv.id)) ?? inv);
}
