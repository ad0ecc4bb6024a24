import type { FastifyBaseLogger } from "fastify";
import { secretsEqual } from "../../auth/secrets.js";
import { ApiError, authRequired, badRequest } from "../../http/errors.js";
import { inTransaction } from "../../store/db.js";
import { applyStripeIntent, PaymentMismatch } from "./apply.js";
import { cardDisplay, type Stripe } from "./stripe.js";
import { TossError, type TossPayment } from "./toss.js";
import { applyRefund, type Locked } from "./settle.js";
import type { PaymentDeps, PaymentsService } from "./service.js";
import * as repo from "./repo.js";

export interface WebhookResult {
  received: true;
  /** false when the event was seen before or concerns nothing of ours */
  applied: boolean;
}

const notConfigured = (provider: string) =>
  new ApiError("webhook_not_configured", `The ${provider} webhook is not configured on this platform.`);

/**
 * Inbound payment events. Stripe: signature checked by the SDK on the raw body (with its tolerance window),
 * each event id applied once (recorded in the same transaction as its effect). Toss: the shared secret in
 * ?key=, then the payment is fetched from Toss and its state applied; the body is only a hint of which payment.
 */
export function paymentWebhooks(deps: PaymentDeps, payments: PaymentsService) {
  const { db, config } = deps;

  function verifyStripe(raw: Buffer, signature: string | undefined, log: FastifyBaseLogger): Stripe.Event {
    if (!deps.stripe || !config.stripe.webhookSecret) throw notConfigured("stripe");
    if (!signature) {
      log.warn("stripe webhook without a Stripe-Signature header refused");
      throw badRequest("invalid_signature", "The Stripe-Signature header is missing.");
    }
    try {
      return deps.stripe.webhooks.constructEvent(
        raw,
        signature,
        config.stripe.webhookSecret,
        config.stripe.webhookToleranceSeconds,
      );
    } catch (err) {
      log.warn(
        { reason: err instanceof Error ? err.message : String(err) },
        "stripe webhook with a bad signature refused; nothing applied",
      );
      throw badRequest(
        "invalid_signature",
        "The Stripe signature does not verify (wrong secret, altered body, or outside the tolerance window).",
      );
    }
  }

  /** A saved-card event is applied only if Stripe still has the card on the account's customer now. */
  async function currentCard(pmId: string | null): Promise<Stripe.PaymentMethod | null> {
    if (!pmId) return null;
    try {
      return await deps.stripe!.paymentMethods.retrieve(pmId);
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 404) return null;
      throw err; // unknown: answer 500 so Stripe delivers the event again
    }
  }

  async function stripeEvent(
    raw: Buffer,
    signature: string | undefined,
    log: FastifyBaseLogger,
  ): Promise<WebhookResult> {
    const event = verifyStripe(raw, signature, log);
    const obj = event.data.object as unknown as Record<string, unknown>;
    // what needs the network is fetched before the transaction
    let pm: Stripe.PaymentMethod | null = null;
    if (event.type === "setup_intent.succeeded") pm = await currentCard(refOf(obj.payment_method));
    if (event.type === "payment_method.attached") pm = await currentCard(String(obj.id));

    let replacedCard: repo.CardRow | null = null;
    const applied = await inTransaction(db, async (tx) => {
      if (!(await repo.recordWebhookEvent(tx, "stripe", event.id, event.type))) return false;
      const onTopup = async (topup: repo.TopupRow | null, fn: (l: Locked) => Promise<unknown>) => {
        if (!topup) {
          log.info(
            { event: event.id, type: event.type },
            "stripe event for no top-up of ours; recorded, nothing applied",
          );
          return false;
        }
        const locked = await repo.lockTopup(tx, topup.id);
        try {
          await fn({ tx, topup: locked! });
        } catch (err) {
          if (!(err instanceof PaymentMismatch)) throw err;
          log.error({ err, event: event.id }, "stripe event does not match its top-up; nothing applied");
          return false;
        }
        return true;
      };
      switch (event.type) {
        case "payment_intent.succeeded":
        case "payment_intent.payment_failed":
        case "payment_intent.canceled":
        case "payment_intent.processing": {
          const pi = event.data.object as Stripe.PaymentIntent;
          return onTopup(await intentTopup(tx, pi), (l) => applyStripeIntent(l, pi, config));
        }
        case "charge.refunded": {
          const charge = event.data.object as Stripe.Charge;
          const piId = refOf(charge.payment_intent);
          const topup = piId ? await repo.findTopupByRef(tx, "stripe", piId) : null;
          return onTopup(topup, async (l) => {
            if (charge.amount !== l.topup.amount || charge.currency.toLowerCase() !== "usd")
              throw new PaymentMismatch(`charge ${charge.id} amount ${charge.amount} ${charge.currency}`);
            await applyRefund(
              l,
              charge.amount_refunded,
              l.topup.status === "pending" ? "succeeded" : (l.topup.provider_status ?? "succeeded"),
            );
          });
        }
        case "setup_intent.succeeded":
        case "payment_method.attached": {
          if (!pm || pm.type !== "card" || !pm.card) return false;
          const customer = refOf(pm.customer);
          const payer = customer ? await repo.findPayerByCustomer(tx, "stripe", customer) : null;
          if (!payer) return false; // detached since, or not our customer
          if (await repo.cardWasDeleted(tx, payer.owner, "stripe", pm.id, deps.secrets)) return false; // never resurrect a card the user removed
          const { replaced } = await payments.storeCardIn(tx, payer, {
            provider: "stripe",
            provider_ref: pm.id,
            customer_ref: customer!,
            ...cardDisplay(pm),
          });
          replacedCard = replaced;
          return true;
        }
        default:
          return false;
      }
    });
    if (replacedCard) await payments.forgetAtProvider(replacedCard);
    return { received: true, applied };
  }

  async function intentTopup(tx: Locked["tx"], pi: Stripe.PaymentIntent): Promise<repo.TopupRow | null> {
    const byRef = await repo.findTopupByRef(tx, "stripe", pi.id);
    if (byRef) return byRef;
    const id = pi.metadata?.topup_id;
    if (!id || !/^[0-9a-f-]{36}$/.test(id)) return null;
    const t = await repo.findTopup(tx, id);
    return t && t.provider === "stripe" ? t : null;
  }

  async function tossEvent(key: string | undefined, body: unknown, log: FastifyBaseLogger): Promise<WebhookResult> {
    if (!deps.toss || !config.toss.webhookKey) throw notConfigured("toss");
    if (!key || !secretsEqual(key, config.toss.webhookKey)) {
      log.warn("toss webhook with a missing or wrong key refused; nothing applied");
      throw authRequired("The webhook key is missing or wrong.");
    }
    const data = (body as { data?: { paymentKey?: unknown; orderId?: unknown } } | null)?.data;
    const paymentKey = typeof data?.paymentKey === "string" && data.paymentKey.length <= 200 ? data.paymentKey : null;
    if (!paymentKey) throw badRequest("invalid_request", "The body has no data.paymentKey.");
    let payment: TossPayment;
    try {
      payment = await deps.toss.getPayment(paymentKey);
    } catch (err) {
      if (err instanceof TossError && err.status === 404) {
        log.warn({ paymentKey }, "toss webhook names a payment Toss does not know; nothing applied");
        return { received: true, applied: false };
      }
      throw new ApiError("provider_error", "Toss could not be asked about the payment; deliver again later.");
    }
    const topup = await repo.findTopupByOrderId(db, payment.orderId);
    if (!topup || topup.provider !== "toss") {
      log.info({ orderId: payment.orderId }, "toss payment for no top-up of ours; nothing applied");
      return { received: true, applied: false };
    }
    try {
      await payments.settleToss(topup.id, payment);
    } catch (err) {
      if (err instanceof ApiError && err.status === 502) return { received: true, applied: false }; // mismatch, logged
      throw err;
    }
    return { received: true, applied: true };
  }

  return { stripeEvent, tossEvent };
}

function refOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string") return (v as { id: string }).id;
  return null;
}
