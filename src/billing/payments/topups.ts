/**
 * Top-ups: a customer's one-off payment into their wallet (Stripe PaymentIntent or Toss payment window),
 * created, then confirmed; both confirm paths end in settle.ts, like the webhooks and the auto-recharge job.
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { badRequest, conflict, found } from "../../http/errors.js";
import { createOnce } from "../../http/idempotent-change.js";
import { inTransaction } from "../../store/db.js";
import type { Currency } from "../ledger/ledger.js";
import { PROVIDER_CURRENCY, toLedgerUnits, type Provider } from "./money.js";
import { isStripeError, type Stripe } from "./stripe.js";
import { TossError, type TossPayment } from "./toss.js";
import { applyStripeIntent, applyTossPayment, PaymentMismatch } from "./apply.js";
import { type Locked, withLockedTopup } from "./settle.js";
import { ORDER_NAME, payerOf, paymentHelpers, type PaymentDeps } from "./deps.js";
import { paymentFailed, providerError, stripeFailure } from "./errors.js";
import * as repo from "./repo.js";

/** What POST /v1/billing/topups/:id/confirm carries: toss needs payment_key, stripe may take payment_method. */
type ConfirmInput = { payment_key?: string; payment_method?: string };

export function topupsService(deps: PaymentDeps) {
  const { db, config, log } = deps;
  const { stripe, toss, checkAmount } = paymentHelpers(deps);

  function checkProvider(provider: Provider, currency: Currency): void {
    if (PROVIDER_CURRENCY[provider] !== currency) {
      throw badRequest(
        "currency_not_supported",
        `${provider} top-ups are in ${PROVIDER_CURRENCY[provider]}, not ${currency}.`,
      );
    }
  }

  async function getTopup(p: Principal, id: string): Promise<repo.TopupRow> {
    return found(await repo.findTopup(db, id, p.owner), "top-up");
  }

  async function createTopup(
    p: Principal,
    input: { amount: number; currency: Currency; provider: Provider },
  ): Promise<repo.TopupRow> {
    checkProvider(input.provider, input.currency);
    checkAmount(input.currency, input.amount);
    if (input.provider === "stripe") stripe();
    else toss();
    const newId = randomUUID();
    // the row exists before the provider hears of it, so a webhook always finds its top-up
    const row = {
      id: newId,
      provider: input.provider,
      currency: input.currency,
      amount: input.amount,
      credit_amount: toLedgerUnits(input.currency, input.amount),
      origin: "manual" as const,
      order_id: `topup-${newId}`,
    };
    // the payment window runs with order_id and amount; confirm brings the paymentKey
    if (input.provider === "toss") return auditedTransaction(db, p, (tx) => repo.insertTopup(tx, payerOf(p), row));
    // the insert is the create an Idempotency-Key binds (http/idempotent-change.ts): a retry after a crash goes on
    // with the top-up the first attempt made, and Stripe's own key below gives it the same PaymentIntent
    const made = await inTransaction(db, (tx) => createOnce(tx, p.audit, () => repo.insertTopup(tx, payerOf(p), row)));
    const topup = made.replayed ? ((await repo.findTopup(db, made.value.id)) ?? made.value) : made.value;
    if (made.replayed && topup.provider_ref) return topup;
    const id = topup.id;
    let pi: Stripe.PaymentIntent;
    try {
      pi = await stripe().paymentIntents.create(
        {
          amount: input.amount,
          currency: "usd",
          allowed_payment_method_types: ["card"],
          description: ORDER_NAME,
          customer: (await repo.findCustomer(db, p.owner, "stripe")) ?? undefined,
          metadata: { topup_id: id, account_id: p.accountId, order_id: topup.order_id },
        },
        { idempotencyKey: `topup-create-${id}` },
      );
    } catch (err) {
      const mapped = stripeFailure(err);
      await repo.updateTopup(db, id, {
        status: "failed",
        failure_code: "provider_error",
        failure_message: mapped.message,
      });
      throw mapped;
    }
    // the request's change is complete once the top-up names its PaymentIntent: the audit row commits with it
    return auditedTransaction(db, p, (tx) =>
      repo.updateTopup(tx, id, { provider_ref: pi.id, client_secret: pi.client_secret, provider_status: pi.status }),
    );
  }

  /** Settles a top-up from the provider's answer; a mismatch is logged and never credited. */
  async function settle(
    provider: "stripe" | "toss",
    topupId: string,
    apply: (l: Locked) => Promise<repo.TopupRow>,
    caller: Principal | null,
  ): Promise<repo.TopupRow> {
    try {
      return await withLockedTopup(db, topupId, apply, caller);
    } catch (err) {
      if (err instanceof PaymentMismatch) {
        log.error({ err, topupId }, "payment does not match its top-up; nothing applied");
        throw providerError(provider, "the payment does not match this top-up");
      }
      throw err;
    }
  }
  const settleStripe = (topupId: string, pi: Stripe.PaymentIntent, caller: Principal | null = null) =>
    settle("stripe", topupId, (l) => applyStripeIntent(l, pi, config), caller);
  const settleToss = (topupId: string, p: TossPayment, caller: Principal | null = null) =>
    settle("toss", topupId, (l) => applyTossPayment(l, p, config), caller);

  async function confirmTopup(p: Principal, id: string, input: ConfirmInput): Promise<repo.TopupRow> {
    const topup = await getTopup(p, id);
    if (
      topup.provider === "toss" &&
      input.payment_key !== undefined &&
      topup.provider_ref !== null &&
      topup.provider_ref !== input.payment_key
    ) {
      throw conflict("payment_key_mismatch", "This top-up is already tied to another Toss paymentKey.");
    }
    if (topup.status === "succeeded" || topup.status === "refunded") return topup;
    if (topup.status === "failed")
      throw conflict("topup_not_pending", `This top-up has failed (${topup.failure_code}); create a new one.`);
    return topup.provider === "stripe" ? confirmStripe(p, topup, input) : confirmToss(p, topup, input);
  }

  async function confirmStripe(p: Principal, topup: repo.TopupRow, input: ConfirmInput): Promise<repo.TopupRow> {
    if (input.payment_key !== undefined)
      throw badRequest(
        "invalid_request",
        "payment_key is for toss top-ups; a stripe top-up takes payment_method or nothing.",
      );
    if (!topup.provider_ref) throw providerError("stripe", "the top-up has no PaymentIntent");
    const s = stripe();
    let pi: Stripe.PaymentIntent;
    try {
      pi = await s.paymentIntents.retrieve(topup.provider_ref);
      if (
        input.payment_method !== undefined &&
        (pi.status === "requires_payment_method" || pi.status === "requires_confirmation")
      ) {
        pi = await s.paymentIntents.confirm(
          pi.id,
          { payment_method: input.payment_method },
          { idempotencyKey: `topup-confirm-${topup.id}-${input.payment_method}` },
        );
      }
    } catch (err) {
      const mapped = stripeFailure(err);
      if (mapped.status === 402 && isStripeError(err)) {
        await withLockedTopup(db, topup.id, async (l) => {
          if (l.topup.status === "pending")
            await repo.updateTopup(l.tx, topup.id, {
              failure_code: err.decline_code ?? err.code ?? "card_declined",
              failure_message: err.message,
            });
        });
      }
      throw mapped;
    }
    return settleStripe(topup.id, pi, p);
  }

  async function confirmToss(p: Principal, topup: repo.TopupRow, input: ConfirmInput): Promise<repo.TopupRow> {
    if (input.payment_method !== undefined)
      throw badRequest("invalid_request", "payment_method is for stripe top-ups; a toss top-up takes payment_key.");
    const paymentKey = input.payment_key ?? topup.provider_ref;
    if (!paymentKey)
      throw badRequest(
        "payment_key_required",
        "Send the paymentKey that the Toss payment window returned as payment_key.",
      );
    const t = toss();
    // Toss checks that the key belongs to this order and amount; the key is recorded once Toss has said so
    if (topup.provider_ref !== null && topup.provider_ref !== paymentKey) {
      throw conflict("payment_key_mismatch", "This top-up is already tied to another Toss paymentKey.");
    }
    let payment: TossPayment;
    try {
      payment = await t.confirm({ paymentKey, orderId: topup.order_id, amount: topup.amount });
    } catch (err) {
      if (!(err instanceof TossError)) throw err;
      if (err.status === 0 || err.status >= 500) throw providerError("toss", err.message);
      // already confirmed (by a concurrent call, or earlier): Toss's record says how it ended
      let current: TossPayment;
      try {
        current = await t.getPayment(paymentKey);
      } catch (lookup) {
        if (lookup instanceof TossError && lookup.status === 404)
          throw badRequest("invalid_payment_key", "Toss does not know this paymentKey.");
        throw providerError("toss", lookup instanceof Error ? lookup.message : String(lookup));
      }
      if (current.orderId !== topup.order_id)
        throw badRequest("invalid_payment_key", "This paymentKey belongs to another order.");
      if (current.status === "READY" || current.status === "IN_PROGRESS") {
        // the confirm itself was refused (wrong amount, declined card): recorded, and the customer may try again
        await withLockedTopup(db, topup.id, async (l) => {
          if (l.topup.status === "pending")
            await repo.updateTopup(l.tx, topup.id, { failure_code: err.code, failure_message: err.message });
        });
        throw err.status === 400
          ? badRequest("payment_rejected", `Toss refused the confirmation: ${err.message} (${err.code}).`)
          : paymentFailed(err.code, err.message);
      }
      // how it ended decides the answer (200 or 402): the HTTP layer records the audit row with that status
      const settled = await settleToss(topup.id, current);
      if (settled.status === "failed")
        throw paymentFailed(settled.failure_code ?? err.code, settled.failure_message ?? err.message);
      return settled;
    }
    return settleToss(topup.id, payment, p);
  }

  return { createTopup, getTopup, confirmTopup, settleStripe, settleToss };
}
