import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "../../http/schemas.js";
import { ErrorBodySchema } from "../../http/error-handler.js";
import type { CardRow, TopupRow, AutoRechargeRow } from "./repo.js";
import { cardInfo, type CardInfo } from "../invoicing/card-info.js";
import { ORDER_NAME, AUTO_ORDER_NAME } from "./service.js";

export const ErrorBody = { ...ErrorBodySchema, description: "Error" };

export const ProviderSchema = Type.Union([Type.Literal("stripe"), Type.Literal("toss")], {
  description: "stripe (USD) or toss (KRW)",
});
/** What saving a card takes beside the provider (personal, and the organization's: POST /v1/org/billing/card). */
export const CardCredentials = {
  payment_method: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  auth_key: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
};
/** What saving a card can be refused with at the provider, whoever's card it is. */
export const CARD_SAVE_ERRORS = [
  "provider_unavailable",
  "provider_error",
  "invalid_payment_method",
  "payment_failed",
  "auth_key_required",
  "invalid_auth_key",
  "card_save_in_progress",
] as const;
export const CurrencySchema = Type.Union([Type.Literal("USD"), Type.Literal("KRW")]);

export const Topup = Type.Object({
  id: Type.String(),
  provider: ProviderSchema,
  currency: CurrencySchema,
  amount: Type.Integer({ description: "charged, in the provider's smallest unit: USD cents, KRW won" }),
  credit_amount: Type.Integer({ description: "credited to the wallet, in ledger units: USD micro-dollars, KRW won" }),
  status: Type.Union(["pending", "succeeded", "failed", "refunded"].map((s) => Type.Literal(s))),
  origin: Type.Union([Type.Literal("manual"), Type.Literal("auto_recharge")]),
  order_id: Type.String({ description: "Toss orderId for the payment window" }),
  order_name: Type.String(),
  client_secret: Nullable(
    Type.String({ description: "Stripe PaymentIntent client secret for Stripe.js (stripe top-ups)" }),
  ),
  provider_ref: Nullable(Type.String({ description: "Stripe PaymentIntent id or Toss paymentKey" })),
  provider_status: Nullable(Type.String()),
  refunded_amount: Type.Integer({ description: "refunded so far, provider units" }),
  failure: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  credited_at: Nullable(Timestamp),
  created_at: Timestamp,
});

export const topupView = (t: TopupRow) => ({
  id: t.id,
  provider: t.provider,
  currency: t.currency,
  amount: t.amount,
  credit_amount: t.credit_amount,
  status: t.status,
  origin: t.origin,
  order_id: t.order_id,
  order_name: t.origin === "auto_recharge" ? AUTO_ORDER_NAME : ORDER_NAME,
  client_secret: t.client_secret,
  provider_ref: t.provider_ref,
  provider_status: t.provider_status,
  refunded_amount: t.refunded_amount,
  failure: t.failure_code ? { code: t.failure_code, message: t.failure_message ?? "" } : null,
  credited_at: t.credited_at?.toISOString() ?? null,
  created_at: t.created_at.toISOString(),
});

export const Card = Type.Object({
  id: Type.String(),
  provider: ProviderSchema,
  brand: Nullable(Type.String()),
  last4: Nullable(Type.String({ description: "last four digits as the provider shows them (Toss may mask some)" })),
  exp_month: Nullable(Type.Integer()),
  exp_year: Nullable(Type.Integer()),
  created_at: Timestamp,
});

/** A saved card's display data (personal, and the organization's: orgs/invoices); never its provider references. */
export const cardView = (c: CardInfo) => ({ ...cardInfo(c), created_at: c.created_at.toISOString() });

export const AutoRecharge = Type.Object({
  enabled: Type.Boolean(),
  threshold: Type.Integer({
    description: "charge when the balance falls below this, provider units (USD cents, KRW won)",
  }),
  amount: Type.Integer({ description: "charged each time, provider units; 0 when never set" }),
  currency: Type.Unsafe<"USD" | "KRW" | null>({
    type: "string",
    enum: ["USD", "KRW"],
    nullable: true,
    description: "the saved card's currency; null before auto-recharge is first set",
  }),
  card: Nullable(Card),
  in_flight: Type.Boolean({ description: "a charge is under way" }),
  consecutive_failures: Type.Integer(),
  last_error: Nullable(Type.String()),
  next_attempt_at: Nullable(Timestamp),
});

export const autoRechargeView = (a: AutoRechargeRow | null, card: CardRow | null) => ({
  enabled: a?.enabled ?? false,
  threshold: a?.threshold ?? 0,
  amount: a?.amount ?? 0,
  currency: a?.currency ?? null,
  card: card ? cardView(card) : null,
  in_flight: a?.in_flight_topup_id != null,
  consecutive_failures: a?.consecutive_failures ?? 0,
  last_error: a?.last_error ?? null,
  next_attempt_at: a?.next_attempt_at?.toISOString() ?? null,
});

export const WebhookAnswer = Type.Object({ received: Type.Boolean(), applied: Type.Boolean() });
