import type { PaymentsConfig } from "../../config/config.js";
import type { Stripe } from "./stripe.js";
import { tossRefunded, type TossPayment } from "./toss.js";
import * as repo from "./repo.js";
import { applyRefund, credit, fail, noteAttemptFailure, type Locked } from "./settle.js";

/** The provider's object does not describe this top-up (another amount, order or currency): nothing is applied. */
export class PaymentMismatch extends Error {}

/** Applies what Stripe says about a PaymentIntent to its (locked) top-up. */
export async function applyStripeIntent(
  l: Locked,
  pi: Stripe.PaymentIntent,
  config: PaymentsConfig,
): Promise<repo.TopupRow> {
  const t = l.topup;
  if (
    (t.provider_ref !== null && pi.id !== t.provider_ref) ||
    pi.currency.toLowerCase() !== "usd" ||
    pi.amount !== t.amount
  ) {
    throw new PaymentMismatch(
      `PaymentIntent ${pi.id} (${pi.amount} ${pi.currency}) does not match top-up ${t.id} (${t.amount} USD)`,
    );
  }
  if (t.provider_ref === null) l.topup = await repo.updateTopup(l.tx, t.id, { provider_ref: pi.id });
  switch (pi.status) {
    case "succeeded":
      if (pi.amount_received < t.amount)
        throw new PaymentMismatch(`PaymentIntent ${pi.id} received ${pi.amount_received} of ${t.amount}`);
      return credit(l, pi.status);
    case "canceled":
      return fail(
        l,
        "canceled",
        `The payment was canceled (${pi.cancellation_reason ?? "no reason given"}).`,
        pi.status,
        config,
      );
    case "requires_payment_method": {
      const e = pi.last_payment_error;
      if (!e) break;
      const code = e.decline_code ?? e.code ?? "payment_failed";
      const message = e.message ?? "The card was declined.";
      // an off-session charge that fails is over; a customer in the browser may try another card
      return t.origin === "auto_recharge"
        ? fail(l, code, message, pi.status, config)
        : noteAttemptFailure(l, code, message, pi.status);
    }
  }
  if (l.topup.provider_status !== pi.status)
    l.topup = await repo.updateTopup(l.tx, t.id, { provider_status: pi.status });
  return l.topup;
}

/** Applies what Toss says about a payment to its (locked) top-up: approval, cancellations, abort. */
export async function applyTossPayment(l: Locked, p: TossPayment, config: PaymentsConfig): Promise<repo.TopupRow> {
  const t = l.topup;
  if (
    p.orderId !== t.order_id ||
    p.totalAmount !== t.amount ||
    (p.currency && p.currency !== "KRW") ||
    (t.provider_ref !== null && t.provider_ref !== p.paymentKey)
  ) {
    throw new PaymentMismatch(
      `Toss payment ${p.paymentKey} (${p.orderId}, ${p.totalAmount}) does not match top-up ${t.id} (${t.order_id}, ${t.amount})`,
    );
  }
  if (t.provider_ref === null) l.topup = await repo.updateTopup(l.tx, t.id, { provider_ref: p.paymentKey });
  switch (p.status) {
    case "DONE":
      return credit(l, p.status);
    case "CANCELED":
    case "PARTIAL_CANCELED":
      return applyRefund(l, tossRefunded(p), p.status);
    case "ABORTED":
    case "EXPIRED":
      return fail(
        l,
        p.failure?.code ?? p.status.toLowerCase(),
        p.failure?.message ?? `The payment is ${p.status.toLowerCase()}.`,
        p.status,
        config,
      );
  }
  if (l.topup.provider_status !== p.status) l.topup = await repo.updateTopup(l.tx, t.id, { provider_status: p.status });
  return l.topup;
}
