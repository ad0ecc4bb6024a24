/**
 * Saved cards: the owner's one card for off-session charges (a Stripe PaymentMethod on a customer, or a
 * Toss billing key), saved, replaced and deleted. Auto-recharge charges it (auto-recharge.ts).
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/principal.js";
import { isUniqueViolation, type Queryable } from "../../store/db.js";
import { auditedTransaction } from "../../audit/record.js";
import { badRequest, conflict, found } from "../../http/errors.js";
import type { Provider } from "./money.js";
import { cardDisplay, type Stripe } from "./stripe.js";
import { TossError } from "./toss.js";
import { payerOf, paymentHelpers, type PaymentDeps } from "./deps.js";
import { providerError, stripeFailure } from "./errors.js";
import * as repo from "./repo.js";

type NewCard = Omit<repo.CardRow, "id" | "account_id" | "owner_kind" | "owner_id" | "created_at" | "deleted_at">;

export function cardsService(deps: PaymentDeps) {
  const { db, log } = deps;
  const { stripe, toss } = paymentHelpers(deps);

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
      const current = found(await repo.liveCard(tx, p.owner, deps.secrets, true), "saved card");
      await repo.markCardDeleted(tx, current.id);
      await repo.disableAutoRecharge(tx, p.owner);
      return current;
    });
    await forgetAtProvider(card);
  }

  return { saveCard, storeCardIn, forgetAtProvider, deleteCard };
}
