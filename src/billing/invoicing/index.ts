/**
 * Billing in arrears on a saved card, for organizations in card billing mode (src/orgs/invoices): what billing
 * owns of it. The wallet's policy switch (postpaid while the card pays, so admission lets paid creation through and
 * overdue never applies), the period's usage read from the ledger and the usage records, the off-session charge of
 * the owner's saved card through the providers auto-recharge uses (payments/auto-recharge.ts), and the ledger
 * posting that settles a paid invoice. The organization's invoices themselves are the orgs area's rows.
 */
import type { Principal } from "../../auth/principal.js";
import type { Owner } from "../../kernel/owner.js";
import type { Queryable } from "../../store/db.js";
import { badRequest } from "../../http/errors.js";
import { findWalletOf, postWithSystem, walletFor } from "../ledger/ledger.js";
import { walletOwnerOf } from "../owner.js";
import type { PaymentDeps } from "../payments/deps.js";
import { cardsService } from "../payments/cards.js";
import type { Provider } from "../payments/money.js";
import { cardInfo, type CardInfo } from "./card-info.js";
import * as payRepo from "../payments/repo.js";
import * as repo from "./repo.js";

export { paymentDeps } from "../payments/jobs.js";
export type { PaymentDeps } from "../payments/deps.js";
export { chargeCard, type ChargeOutcome, type InvoiceCharge } from "./charge.js";
export type { CardInfo } from "./card-info.js";

/** The owner's saved card, or null. */
export async function savedCard(deps: PaymentDeps, owner: Owner, q: Queryable = deps.db): Promise<CardInfo | null> {
  const c = await payRepo.liveCard(q, owner, deps.secrets);
  return c ? cardInfo(c) : null;
}

/**
 * Saves a card for the caller's owner through billing's card flow (cards.ts: provider customer, Toss billing key or
 * attached Stripe PaymentMethod, replacing any saved card), synchronously: a Stripe card needs its payment_method
 * (the SetupIntent path, finished later by a webhook, has nobody to switch billing on when it completes).
 */
export async function saveCardNow(
  deps: PaymentDeps,
  p: Principal,
  input: { provider: Provider; payment_method?: string; auth_key?: string },
): Promise<CardInfo> {
  if (input.provider === "stripe" && input.payment_method === undefined)
    throw badRequest(
      "invalid_request",
      "A stripe card is registered here with payment_method (pm_…): confirm a SetupIntent with POST /v1/billing/cards first.",
    );
  const saved = await cardsService(deps).saveCard(p, input);
  if (!("card" in saved)) throw new Error("saveCard started a SetupIntent for a payment method");
  return cardInfo(saved.card);
}

/** Forgets the caller's owner's saved card (404 when none), as DELETE /v1/billing/cards does. */
export const deleteSavedCard = (deps: PaymentDeps, p: Principal) => cardsService(deps).deleteCard(p);

/** Card billing starts: the owner's KRW wallet (created if missing) becomes postpaid. */
export async function startCardBilling(q: Queryable, owner: Owner): Promise<void> {
  const wallet = await walletFor(q, walletOwnerOf(owner), "KRW");
  await repo.setCardPolicy(q, wallet.id, true);
}

/** Card billing ends: the wallet is prepaid again (overdue at once if it still owes). */
export async function endCardBilling(q: Queryable, owner: Owner): Promise<void> {
  const wallet = await findWalletOf(q, walletOwnerOf(owner), "KRW");
  if (wallet) await repo.setCardPolicy(q, wallet.id, false);
}

export interface PeriodUsage {
  /** whole KRW the owner's KRW wallet was debited for usage of intervals starting in the period (the ledger's sum) */
  totalKrw: number;
  /** exact micro-won of the usage records behind it, by creator (usage_records.account_id) and kind */
  lines: { accountId: string; kind: string; microkrw: number }[];
}

/**
 * The owner's usage charged to its own KRW wallet for meter intervals starting in [from, to). The total is what the
 * ledger debited; the lines are the records' exact micro-won, which differ from it by the sub-won carry at the
 * period's edges (meter.ts, "Rounding").
 */
export async function periodUsage(q: Queryable, owner: Owner, from: Date, to: Date): Promise<PeriodUsage> {
  const wallet = await findWalletOf(q, walletOwnerOf(owner), "KRW");
  if (!wallet) return { totalKrw: 0, lines: [] };
  const [totalKrw, lines] = await Promise.all([
    repo.usagePostedKrw(q, wallet.id, from, to),
    repo.usageLines(q, owner, wallet.id, from, to),
  ]);
  return { totalKrw, lines: lines.map((l) => ({ accountId: l.account_id, kind: l.kind, microkrw: l.micro })) };
}

export const invoicePaymentKey = (invoiceId: string) => `org-invoice:${invoiceId}:paid`;

/**
 * A paid invoice: the money the card provider collected (payments-clearing, as a card top-up) credits the owner's
 * wallet by the invoice total, covering the usage already debited; a waived one is paid by the platform
 * (adjustments). Once per invoice (the ledger key).
 */
export async function creditInvoicePayment(
  q: Queryable,
  owner: Owner,
  invoice: { id: string; amountKrw: number; memo: string; waived?: boolean },
): Promise<string> {
  const { transaction } = await postWithSystem(q, {
    owner: walletOwnerOf(owner),
    system: invoice.waived ? "adjustments" : "payments-clearing",
    amount: invoice.amountKrw,
    currency: "KRW",
    source: { type: "invoice", id: invoice.id },
    idempotencyKey: invoicePaymentKey(invoice.id),
    memo: invoice.memo,
  });
  return transaction.id;
}
