/**
 * One off-session charge of an owner's saved card in KRW, for an invoice: Toss Payments charges the billing key,
 * Stripe confirms a PaymentIntent in KRW (a zero-decimal currency) on the saved PaymentMethod; the same calls
 * auto-recharge makes (payments/auto-recharge.ts). The caller numbers its attempts: the same idempotency key and
 * order id for a retry of one attempt whose answer was lost (the provider then answers that attempt's outcome
 * instead of charging again), new ones for a new attempt after a decline.
 */
import type { Owner } from "../../kernel/owner.js";
import type { PaymentDeps } from "../payments/deps.js";
import type { Provider } from "../payments/money.js";
import { isStripeError, type Stripe } from "../payments/stripe.js";
import { TossError, type TossPayment } from "../payments/toss.js";
import * as payRepo from "../payments/repo.js";
import * as repo from "./repo.js";
import { cardInfo, type CardInfo } from "./card-info.js";

export interface InvoiceCharge {
  amountKrw: number;
  /** Toss orderId (6-64 of [A-Za-z0-9_-]), also Stripe metadata; one per attempt */
  orderId: string;
  /** one per attempt */
  idempotencyKey: string;
  orderName: string;
  metadata: Record<string, string>;
  /** the provider's payment of this attempt, when an earlier try of it learned one (a Stripe PaymentIntent id) */
  known: { provider: Provider; ref: string } | null;
  /** the card this attempt charges (billing_cards.id, even if deleted since); null: the saved card */
  cardId?: string | null;
}

export type ChargeOutcome =
  | { status: "paid"; providerRef: string }
  | { status: "declined"; code: string; message: string; providerRef: string | null }
  /** no answer (network, provider error, payment still processing): retry the same attempt later */
  | { status: "unknown"; message: string; providerRef: string | null };

const declined = (code: string, message: string, providerRef: string | null = null): ChargeOutcome => ({
  status: "declined",
  code,
  message,
  providerRef,
});

/** Charges the owner's saved card (or the given one); answers the card it used (null: none) and the outcome. */
export async function chargeCard(
  deps: PaymentDeps,
  owner: Owner,
  c: InvoiceCharge,
): Promise<{ card: CardInfo | null; outcome: ChargeOutcome }> {
  const card = c.cardId
    ? await repo.cardById(deps.db, owner, c.cardId, deps.secrets)
    : await payRepo.liveCard(deps.db, owner, deps.secrets);
  if (!card) return { card: null, outcome: declined("card_missing", "No card is saved for the organization.") };
  const outcome = card.provider === "stripe" ? await viaStripe(deps, card, c) : await viaToss(deps, card, c);
  return { card: cardInfo(card), outcome };
}

function fromIntent(pi: Stripe.PaymentIntent, amount: number): ChargeOutcome {
  if (pi.currency.toLowerCase() !== "krw" || pi.amount !== amount)
    return declined("amount_mismatch", `PaymentIntent ${pi.id} is ${pi.amount} ${pi.currency}, not ${amount} krw.`);
  switch (pi.status) {
    case "succeeded":
      return { status: "paid", providerRef: pi.id };
    case "requires_payment_method":
    case "canceled": {
      const e = pi.last_payment_error;
      return declined(e?.decline_code ?? e?.code ?? pi.status, e?.message ?? `The payment is ${pi.status}.`, pi.id);
    }
    case "requires_action":
      return declined("authentication_required", "The card needs the cardholder's authentication.", pi.id);
    default:
      return { status: "unknown", message: `The payment is ${pi.status}.`, providerRef: pi.id };
  }
}

async function viaStripe(deps: PaymentDeps, card: payRepo.CardRow, c: InvoiceCharge): Promise<ChargeOutcome> {
  if (!deps.stripe) return declined("provider_unavailable", "Stripe is not configured on this platform.");
  try {
    if (c.known?.provider === "stripe")
      return fromIntent(await deps.stripe.paymentIntents.retrieve(c.known.ref), c.amountKrw);
    const pi = await deps.stripe.paymentIntents.create(
      {
        amount: c.amountKrw,
        currency: "krw",
        customer: card.customer_ref,
        payment_method: card.provider_ref,
        off_session: true,
        confirm: true,
        description: c.orderName,
        metadata: { ...c.metadata, order_id: c.orderId },
      },
      { idempotencyKey: c.idempotencyKey },
    );
    return fromIntent(pi, c.amountKrw);
  } catch (err) {
    if (isStripeError(err) && (err.type === "StripeCardError" || err.type === "StripeInvalidRequestError")) {
      const raw = err.raw as { payment_intent?: { id?: string } } | undefined;
      return declined(err.decline_code ?? err.code ?? "card_declined", err.message, raw?.payment_intent?.id ?? null);
    }
    return { status: "unknown", message: err instanceof Error ? err.message : String(err), providerRef: null };
  }
}

function fromToss(p: TossPayment, c: InvoiceCharge): ChargeOutcome {
  if (p.orderId !== c.orderId || p.totalAmount !== c.amountKrw)
    return declined("amount_mismatch", `Toss payment ${p.paymentKey} does not match order ${c.orderId}.`);
  if (p.status === "DONE") return { status: "paid", providerRef: p.paymentKey };
  if (p.status === "ABORTED" || p.status === "EXPIRED" || p.status === "CANCELED")
    return declined(
      p.failure?.code ?? p.status.toLowerCase(),
      p.failure?.message ?? `The payment is ${p.status.toLowerCase()}.`,
      p.paymentKey,
    );
  return { status: "unknown", message: `The payment is ${p.status}.`, providerRef: p.paymentKey };
}

async function viaToss(deps: PaymentDeps, card: payRepo.CardRow, c: InvoiceCharge): Promise<ChargeOutcome> {
  if (!deps.toss) return declined("provider_unavailable", "Toss Payments is not configured on this platform.");
  try {
    const payment = await deps.toss.chargeBillingKey(
      card.provider_ref,
      { customerKey: card.customer_ref, amount: c.amountKrw, orderId: c.orderId, orderName: c.orderName },
      c.idempotencyKey,
    );
    return fromToss(payment, c);
  } catch (err) {
    if (!(err instanceof TossError) || err.status === 0 || err.status >= 500)
      return { status: "unknown", message: err instanceof Error ? err.message : String(err), providerRef: null };
    if (err.code !== "DUPLICATED_ORDER_ID") return declined(err.code, err.message);
    // an earlier try of this attempt was charged and its answer lost: Toss's record of the order says how it ended
    try {
      return fromToss(await deps.toss.getPaymentByOrderId(c.orderId), c);
    } catch (lookup) {
      return {
        status: "unknown",
        message: lookup instanceof Error ? lookup.message : String(lookup),
        providerRef: null,
      };
    }
  }
}
