import { randomUUID } from "node:crypto";
import type { SecretBox } from "../../kernel/secrets.js";
import type { FastifyBaseLogger } from "fastify";
import type { PaymentsConfig } from "../../config/config.js";
import { isUniqueViolation, type Db, type Queryable } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, badRequest, conflict, notFound } from "../../http/errors.js";
import type { Currency } from "../ledger/ledger.js";
import { PROVIDER_CURRENCY, toLedgerUnits, type Provider } from "./money.js";
import { cardDisplay, isStripeError, type Stripe } from "./stripe.js";
import { TossError, type TossClient, type TossPayment } from "./toss.js";
import { applyStripeIntent, applyTossPayment, PaymentMismatch } from "./apply.js";
import { withLockedTopup } from "./settle.js";
import * as repo from "./repo.js";

export interface PaymentDeps {
  db: Db;
  config: PaymentsConfig;
  stripe: Stripe | null;
  toss: TossClient | null;
  log: FastifyBaseLogger;
  /** seals card references at rest */
  secrets: SecretBox;
}

type NewCard = Omit<repo.CardRow, "id" | "account_id" | "owner_kind" | "owner_id" | "created_at" | "deleted_at">;

/** The caller as payer: its owner pays and holds the card and settings, its account acts. */
export const payerOf = (p: Principal): repo.Payer => ({ owner: p.owner, accountId: p.accountId });

export const ORDER_NAME = "Platform credit top-up";
export const AUTO_ORDER_NAME = "Platform credit auto-recharge";

const unavailable = (provider: Provider) =>
  new ApiError("provider_unavailable", `Payments through ${provider} are not configured on this platform.`);
export const providerError = (provider: Provider, detail: string) =>
  new ApiError("provider_error", `${provider} could not complete the request (${detail}); retry later.`);
const paymentFailed = (code: string, message: string) =>
  new ApiError("payment_failed", `The payment failed: ${message} (${code}).`);

/** Maps a Stripe SDK error: card errors are the customer's, bad requests are 400, the rest is the provider's. */
function stripeFailure(err: unknown): ApiError {
  if (!isStripeError(err)) return providerError("stripe", err instanceof Error ? err.message : String(err));
  if (err.type === "StripeCardError")
    return paymentFailed(err.decline_code ?? err.code ?? "card_declined", err.message);
  if (err.type === "StripeInvalidRequestError" && (err.statusCode ?? 0) < 500)
    return badRequest("invalid_payment_method", err.message);
  return providerError("stripe", err.message);
}

export function paymentsService(deps: PaymentDeps) {
  const { db, config, log } = deps;

  function stripe(): Stripe {
    if (!deps.stripe) throw unavailable("stripe");
    return deps.stripe;
  }
  function toss(): TossClient {
    if (!deps.toss) throw unavailable("toss");
    return deps.toss;
  }

  function checkAmount(currency: Currency, amount: number): void {
    const [min, max, unit] =
      currency === "KRW"
        ? [config.topup.minKrw, config.topup.maxKrw, "KRW"]
        : [config.topup.minUsdCents, config.topup.maxUsdCents, "USD cents"];
    if (amount < min || amount > max)
      throw badRequest("amount_out_of_range", `amount must be between ${min} and ${max} ${unit}.`);
  }

  function checkProvider(provider: Provider, currency: Currency): void {
    if (PROVIDER_CURRENCY[provider] !== currency) {
      throw badRequest(
        "currency_not_supported",
        `${provider} top-ups are in ${PROVIDER_CURRENCY[provider]}, not ${currency}.`,
      );
    }
  }

  async function getTopup(p: Principal, id: string): Promise<repo.TopupRow> {
    const t = await repo.findTopup(db, id, p.owner);
    if (!t) throw notFound("top-up");
    return t;
  }

  async function createTopup(
    p: Principal,
    input: { amount: number; currency: Currency; provider: Provider },
  ): Promise<repo.TopupRow> {
    checkProvider(input.provider, input.currency);
    checkAmount(input.currency, input.amount);
    if (input.provider === "stripe") stripe();
    else toss();
    const id = randomUUID();
    // the row exists before the provider hears of it, so a webhook always finds its top-up
    const row = {
      id,
      provider: input.provider,
      currency: input.currency,
      amount: input.amount,
      credit_amount: toLedgerUnits(input.currency, input.amount),
      origin: "manual" as const,
      order_id: `topup-${id}`,
    };
    // the payment window runs with order_id and amount; confirm brings the paymentKey
    if (input.provider === "toss") return auditedTransaction(db, p, (tx) => repo.insertTopup(tx, payerOf(p), row));
    const topup = await repo.insertTopup(db, payerOf(p), row);
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
  async function settleStripe(
    topupId: string,
    pi: Stripe.PaymentIntent,
    caller: Principal | null = null,
  ): Promise<repo.TopupRow> {
    try {
      return await withLockedTopup(db, topupId, (l) => applyStripeIntent(l, pi, config), caller);
    } catch (err) {
      if (err instanceof PaymentMismatch) {
        log.error({ err, topupId }, "payment does not match its top-up; nothing applied");
        throw providerError("stripe", "the payment does not match this top-up");
      }
      throw err;
    }
  }

  async function settleToss(topupId: string, p: TossPayment, caller: Principal | null = null): Promise<repo.TopupRow> {
    try {
      return await withLockedTopup(db, topupId, (l) => applyTossPayment(l, p, config), caller);
    } catch (err) {
      if (err instanceof PaymentMismatch) {
        log.error({ err, topupId }, "payment does not match its top-up; nothing applied");
        throw providerError("toss", "the payment does not match this top-up");
      }
      throw err;
    }
  }

  async function confirmTopup(
    p: Principal,
    id: string,
    input: { payment_key?: string; payment_method?: string },
  ): Promise<repo.TopupRow> {
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

  async function confirmStripe(
    p: Principal,
    topup: repo.TopupRow,
    input: { payment_key?: string; payment_method?: string },
  ): Promise<repo.TopupRow> {
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

  async function confirmToss(
    p: Principal,
    topup: repo.TopupRow,
    input: { payment_key?: string; payment_method?: string },
  ): Promise<repo.TopupRow> {
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

  // ---- cards

  async function stripeCustomer(payer: repo.Payer): Promise<string> {
    const known = await repo.findCustomer(db, payer.owner, "stripe");
    if (known) return known;
    try {
      // the same idempotency key for every attempt: concurrent first saves get one customer (an account keeps its old key)
      const key =
        payer.owner.kind === "account"
          ? `customer-${payer.owner.id}`
          : `customer-${payer.owner.kind}-${payer.owner.id}`;
      const c = await stripe().customers.create(
        { metadata: { account_id: payer.accountId, owner_kind: payer.owner.kind, owner_id: payer.owner.id } },
        { idempotencyKey: key },
      );
      return repo.saveCustomer(db, payer, "stripe", c.id);
    } catch (err) {
      throw stripeFailure(err);
    }
  }

  async function tossCustomer(payer: repo.Payer): Promise<string> {
    return (
      (await repo.findCustomer(db, payer.owner, "toss")) ?? repo.saveCustomer(db, payer, "toss", `cust-${randomUUID()}`)
    );
  }

  /** Stores a card as the owner's one saved card inside tx; returns the card it replaced, to forget after commit. */
  async function storeCardIn(
    tx: Queryable,
    payer: repo.Payer,
    card: NewCard,
  ): Promise<{ saved: repo.CardRow; replaced: repo.CardRow | null }> {
    const current = await repo.liveCard(tx, payer.owner, deps.secrets, true);
    if (current && current.provider === card.provider && current.provider_ref === card.provider_ref)
      return { saved: current, replaced: null };
    if (current) await repo.markCardDeleted(tx, current.id);
    // auto-recharge follows the card's currency: another provider switches it off
    if (current && current.provider !== card.provider) await repo.disableAutoRecharge(tx, payer.owner);
    try {
      return {
        saved: await repo.insertCard(tx, payer, { id: randomUUID(), ...card }, deps.secrets),
        replaced: current,
      };
    } catch (err) {
      if (isUniqueViolation(err, "billing_cards_live"))
        throw conflict("card_save_in_progress", "Another card is being saved for this account; retry.");
      throw err;
    }
  }

  async function storeCard(p: Principal, card: NewCard): Promise<repo.CardRow> {
    const { saved, replaced } = await auditedTransaction(db, p, (tx) => storeCardIn(tx, payerOf(p), card));
    if (replaced) await forgetAtProvider(replaced);
    return saved;
  }

  /** A replaced or deleted card is detached at Stripe (best effort); a Toss billing key is simply no longer used. */
  async function forgetAtProvider(card: repo.CardRow): Promise<void> {
    if (card.provider !== "stripe" || !deps.stripe) return;
    await deps.stripe.paymentMethods
      .detach(card.provider_ref)
      .catch((err) => log.warn({ err, card: card.id }, "detaching a replaced card at Stripe failed"));
  }

  type SaveCardInput = { provider: Provider; payment_method?: string; auth_key?: string };
  type SaveCardResult = { card: repo.CardRow } | { setup: { id: string; client_secret: string; status: string } };

  async function saveCard(p: Principal, input: SaveCardInput): Promise<SaveCardResult> {
    if (input.provider === "stripe") {
      if (input.auth_key !== undefined)
        throw badRequest(
          "invalid_request",
          "auth_key is for toss cards; a stripe card takes payment_method, or nothing to start a SetupIntent.",
        );
      const s = stripe();
      const customer = await stripeCustomer(payerOf(p));
      if (input.payment_method === undefined) {
        try {
          const si = await s.setupIntents.create({
            customer,
            usage: "off_session",
            allowed_payment_method_types: ["card"],
            metadata: { account_id: p.accountId, owner_kind: p.owner.kind, owner_id: p.owner.id },
          });
          return { setup: { id: si.id, client_secret: si.client_secret!, status: si.status } };
        } catch (err) {
          throw stripeFailure(err);
        }
      }
      let pm: Stripe.PaymentMethod;
      try {
        pm = await s.paymentMethods.attach(input.payment_method, { customer });
      } catch (err) {
        throw stripeFailure(err);
      }
      if (pm.type !== "card" || !pm.card) throw badRequest("invalid_payment_method", "Only cards can be saved.");
      return {
        card: await storeCard(p, {
          provider: "stripe",
          provider_ref: pm.id,
          customer_ref: customer,
          ...cardDisplay(pm),
        }),
      };
    }
    if (input.payment_method !== undefined)
      throw badRequest("invalid_request", "payment_method is for stripe cards; a toss card takes auth_key.");
    if (input.auth_key === undefined)
      throw badRequest(
        "auth_key_required",
        "Send the authKey that the Toss card registration window returned as auth_key.",
      );
    const t = toss();
    const customerKey = await tossCustomer(payerOf(p));
    let auth;
    try {
      auth = await t.issueBillingKey({ authKey: input.auth_key, customerKey });
    } catch (err) {
      if (err instanceof TossError && err.status >= 400 && err.status < 500)
        throw badRequest("invalid_auth_key", `Toss refused the card: ${err.message} (${err.code}).`);
      throw providerError("toss", err instanceof Error ? err.message : String(err));
    }
    const number = auth.cardNumber ?? auth.card?.number ?? "";
    const last4 = number.length >= 4 ? number.slice(-4) : null;
    return {
      card: await storeCard(p, {
        provider: "toss",
        provider_ref: auth.billingKey,
        customer_ref: customerKey,
        brand: auth.cardCompany ?? null,
        last4: last4 && /^[0-9*]{4}$/.test(last4) ? last4 : null,
        exp_month: null,
        exp_year: null,
      }),
    };
  }

  /** Forgets the saved card; auto-recharge, which needs it, is switched off. */
  async function deleteCard(p: Principal): Promise<void> {
    const card = await auditedTransaction(db, p, async (tx) => {
      const current = await repo.liveCard(tx, p.owner, deps.secrets, true);
      if (!current) throw notFound("saved card");
      await repo.markCardDeleted(tx, current.id);
      await repo.disableAutoRecharge(tx, p.owner);
      return current;
    });
    await forgetAtProvider(card);
  }

  // ---- auto-recharge settings

  async function getAutoRecharge(p: Principal) {
    return { settings: await repo.findAutoRecharge(db, p.owner), card: await repo.liveCard(db, p.owner, deps.secrets) };
  }

  async function setAutoRecharge(p: Principal, input: { enabled: boolean; threshold: number; amount: number }) {
    const card = await repo.liveCard(db, p.owner, deps.secrets);
    if (input.enabled && !card)
      throw badRequest("card_required", "Save a card with POST /v1/billing/cards before enabling auto-recharge.");
    const existing = await repo.findAutoRecharge(db, p.owner);
    const currency: Currency = card ? PROVIDER_CURRENCY[card.provider] : (existing?.currency ?? "KRW");
    checkAmount(currency, input.amount);
    const settings = await auditedTransaction(db, p, (tx) =>
      repo.upsertAutoRecharge(tx, payerOf(p), {
        enabled: input.enabled,
        currency,
        threshold: input.threshold,
        amount: input.amount,
      }),
    );
    return { settings, card };
  }

  return {
    createTopup,
    getTopup,
    confirmTopup,
    settleStripe,
    settleToss,
    saveCard,
    storeCardIn,
    forgetAtProvider,
    deleteCard,
    getAutoRecharge,
    setAutoRecharge,
    checkAmount,
  };
}

export type PaymentsService = ReturnType<typeof paymentsService>;
