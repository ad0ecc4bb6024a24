import { randomUUID } from "node:crypto";
import { inTransaction } from "../../store/db.js";
import { findWalletOf } from "../ledger/ledger.js";
import { walletOwnerOf } from "../owner.js";
import { isStripeError, type Stripe } from "./stripe.js";
import { TossError, type TossPayment } from "./toss.js";
import { toLedgerUnits } from "./money.js";
import { applyStripeIntent, applyTossPayment } from "./apply.js";
import { fail, withLockedTopup } from "./settle.js";
import { AUTO_ORDER_NAME, type PaymentDeps } from "./service.js";
import * as repo from "./repo.js";

/** A charge whose outcome is still unknown this long after it started is asked about again. */
const STALE_SECONDS = 120;
const BATCH = 500;

/**
 * One pass of auto-recharge (the periodic job `billing.auto-recharge`): every enabled account whose balance is
 * below its threshold gets one charge on its saved card. The in-flight marker on the settings row is set in
 * the same transaction that creates the top-up, only when none is set, so overlapping passes, several
 * workers and metering ticks never charge twice; a success clears it, a failure clears it with back-off.
 */
export async function runAutoRecharge(deps: PaymentDeps): Promise<{ charged: number; failed: number }> {
  let charged = 0;
  let failed = 0;
  // charges left in flight by a crash or an unknown answer: the same idempotency keys make the retry safe
  for (const stale of await repo.staleInFlight(deps.db, STALE_SECONDS)) {
    const topup = await repo.findTopup(deps.db, stale.in_flight_topup_id);
    if (topup)
      await charge(deps, topup).catch((err) =>
        deps.log.error({ err, topup: topup.id }, "auto-recharge retry of a stale charge failed"),
      );
  }
  for (const due of await repo.dueAutoRecharges(deps.db, BATCH)) {
    const topup = await claim(deps, { owner: repo.settingsOwner(due), accountId: due.account_id });
    if (!topup) continue; // balance high enough, another pass claimed it, or the settings changed
    const result = await charge(deps, topup).catch((err) => {
      deps.log.error({ err, topup: topup.id }, "auto-recharge charge ended without an answer; retried when stale");
      return null;
    });
    if (result?.status === "succeeded") charged++;
    if (result?.status === "failed") failed++;
  }
  return { charged, failed };
}

/**
 * Under the settings row lock: the balance is read only after any charge that finished has committed its
 * credit and released the marker (the same transaction does both), so a pass never charges on a stale balance.
 */
async function claim(deps: PaymentDeps, payer: repo.Payer): Promise<repo.TopupRow | null> {
  return inTransaction(deps.db, async (tx) => {
    const settings = await repo.findAutoRecharge(tx, payer.owner, true);
    if (!settings?.enabled || settings.in_flight_topup_id) return null;
    if (settings.next_attempt_at && settings.next_attempt_at.getTime() > Date.now()) return null;
    const card = await repo.liveCard(tx, payer.owner, deps.secrets);
    if (!card) return null;
    const wallet = await findWalletOf(tx, walletOwnerOf(payer.owner), settings.currency);
    if ((wallet?.balance ?? 0) >= toLedgerUnits(settings.currency, settings.threshold)) return null;
    const id = randomUUID();
    // the account that set auto-recharge up is the one recorded as acting
    const topup = await repo.insertTopup(tx, payer, {
      id,
      provider: card.provider,
      currency: settings.currency,
      amount: settings.amount,
      credit_amount: toLedgerUnits(settings.currency, settings.amount),
      origin: "auto_recharge",
      order_id: `auto-${id}`,
    });
    // nothing claimed: the exception rolls the top-up back with it
    if (!(await repo.claimAutoRecharge(tx, payer.owner, id))) throw new NotClaimed();
    return topup;
  }).catch((err) => {
    if (err instanceof NotClaimed) return null;
    throw err;
  });
}

class NotClaimed extends Error {}

/** Charges the saved card off-session for an auto-recharge top-up and settles the answer. */
async function charge(deps: PaymentDeps, topup: repo.TopupRow): Promise<repo.TopupRow> {
  const { config } = deps;
  if (topup.status !== "pending") return topup;
  if (topup.provider === "stripe" && topup.provider_ref && deps.stripe) {
    // the intent exists: its current state, not a replayed creation answer
    const pi = await deps.stripe.paymentIntents.retrieve(topup.provider_ref);
    return withLockedTopup(deps.db, topup.id, (l) => applyStripeIntent(l, pi, config));
  }
  const card = await repo.liveCard(deps.db, repo.topupOwner(topup), deps.secrets);
  if (!card || card.provider !== topup.provider) {
    return withLockedTopup(deps.db, topup.id, (l) =>
      fail(l, "card_missing", "The saved card was removed or replaced.", null, config),
    );
  }
  if (topup.provider === "stripe") {
    if (!deps.stripe)
      return withLockedTopup(deps.db, topup.id, (l) =>
        fail(l, "provider_unavailable", "Stripe is not configured.", null, config),
      );
    let pi: Stripe.PaymentIntent;
    try {
      pi = await deps.stripe.paymentIntents.create(
        {
          amount: topup.amount,
          currency: "usd",
          customer: card.customer_ref,
          payment_method: card.provider_ref,
          off_session: true,
          confirm: true,
          description: AUTO_ORDER_NAME,
          metadata: { topup_id: topup.id, account_id: topup.account_id, order_id: topup.order_id },
        },
        { idempotencyKey: `topup-create-${topup.id}` },
      );
    } catch (err) {
      if (isStripeError(err) && (err.type === "StripeCardError" || err.type === "StripeInvalidRequestError")) {
        const raw = err.raw as { payment_intent?: { id?: string } } | undefined;
        return withLockedTopup(deps.db, topup.id, async (l) => {
          if (raw?.payment_intent?.id && !l.topup.provider_ref)
            await repo.updateTopup(l.tx, topup.id, { provider_ref: raw.payment_intent.id });
          return fail(
            l,
            err.decline_code ?? err.code ?? "card_declined",
            err.message,
            "requires_payment_method",
            config,
          );
        });
      }
      throw err; // unknown outcome: stays in flight, retried with the same idempotency key when stale
    }
    return withLockedTopup(deps.db, topup.id, (l) => applyStripeIntent(l, pi, config));
  }

  if (!deps.toss)
    return withLockedTopup(deps.db, topup.id, (l) =>
      fail(l, "provider_unavailable", "Toss Payments is not configured.", null, config),
    );
  let payment: TossPayment;
  try {
    payment = await deps.toss.chargeBillingKey(
      card.provider_ref,
      {
        customerKey: card.customer_ref,
        amount: topup.amount,
        orderId: topup.order_id,
        orderName: AUTO_ORDER_NAME,
      },
      topup.id,
    );
  } catch (err) {
    if (!(err instanceof TossError) || err.status === 0 || err.status >= 500) throw err;
    if (err.code === "DUPLICATED_ORDER_ID") {
      // charged by an earlier attempt whose answer was lost: Toss's record of the order says how it ended
      payment = await deps.toss.getPaymentByOrderId(topup.order_id);
    } else {
      return withLockedTopup(deps.db, topup.id, (l) => fail(l, err.code, err.message, null, config));
    }
  }
  return withLockedTopup(deps.db, topup.id, (l) => applyTossPayment(l, payment, config));
}
