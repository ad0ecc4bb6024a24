/** Response shapes of the organization card and invoices, and their mappers. */
import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "../../http/schemas.js";
import { cardView as billingCardView, type CardInfo } from "../../billing/public.js";
import { MAX_ATTEMPTS } from "./charge.js";
import type { InvoiceRow, LineRow } from "./repo.js";

const Provider = Type.Union([Type.Literal("stripe"), Type.Literal("toss")]);

export const Card = Type.Object({
  id: Type.String(),
  provider: Provider,
  brand: Nullable(Type.String()),
  last4: Nullable(Type.String()),
  exp_month: Nullable(Type.Integer()),
  exp_year: Nullable(Type.Integer()),
  created_at: Timestamp,
});

export const cardView = (c: CardInfo | null) => c && billingCardView(c);

export const BillingState = {
  billing_mode: Type.String({ description: "personal, prepaid, card or suite" }),
  card: Nullable(Card),
  card_billing_since: Nullable(Timestamp),
};

export const billingStateView = (s: {
  billing_mode: string;
  card: CardInfo | null;
  card_billing_since: Date | null;
}) => ({
  billing_mode: s.billing_mode,
  card: cardView(s.card),
  card_billing_since: s.card_billing_since?.toISOString() ?? null,
});

export const Invoice = Type.Object({
  id: Type.String(),
  month: Type.String({ description: "YYYY-MM (UTC) of the period" }),
  kind: Type.Union([Type.Literal("monthly"), Type.Literal("closing")], {
    description: "monthly; closing: the month so far, when the card was removed",
  }),
  period_start: Timestamp,
  period_end: Timestamp,
  currency: Type.Literal("KRW"),
  total_krw: Type.Integer({ description: "the organization wallet's usage charges of the period (the ledger's sum)" }),
  status: Type.Union([Type.Literal("pending"), Type.Literal("paid"), Type.Literal("failed")], {
    description:
      "pending: to be charged (or retried); paid; failed: every attempt was declined (register another card)",
  }),
  card: Nullable(
    Type.Object(
      { provider: Provider, brand: Nullable(Type.String()), last4: Nullable(Type.String()) },
      { description: "the card of the last charge attempt (or, before one, the card saved at finalisation)" },
    ),
  ),
  payment: Type.Object({
    attempts: Type.Integer(),
    declines: Type.Integer({ description: "declines since the last card change" }),
    max_attempts: Type.Integer(),
    charging: Type.Boolean({ description: "an attempt is under way" }),
    last_attempt_at: Nullable(Timestamp),
    next_attempt_at: Nullable(Timestamp),
    failure: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    paid_at: Nullable(Timestamp),
    waived: Type.Boolean({ description: "under the 100 KRW minimum charge: not charged, the platform paid it" }),
    transaction_id: Nullable(Type.String({ description: "the ledger posting that credited the wallet" })),
  }),
  created_at: Timestamp,
});

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const invoiceView = (i: InvoiceRow) => ({
  id: i.id,
  month: i.month,
  kind: i.kind,
  period_start: i.period_start.toISOString(),
  period_end: i.period_end.toISOString(),
  currency: "KRW" as const,
  total_krw: i.total_krw,
  status: i.status,
  card: i.card_provider ? { provider: i.card_provider, brand: i.card_brand, last4: i.card_last4 } : null,
  payment: {
    attempts: i.attempts,
    declines: i.failures,
    max_attempts: MAX_ATTEMPTS,
    charging: i.charging_since !== null,
    last_attempt_at: iso(i.last_attempt_at),
    next_attempt_at: iso(i.next_attempt_at),
    failure: i.failure_code ? { code: i.failure_code, message: i.failure_message ?? "" } : null,
    paid_at: iso(i.paid_at),
    waived: i.waived,
    transaction_id: i.payment_transaction_id,
  },
  created_at: i.created_at.toISOString(),
});

const Amount = { microkrw: Type.Integer(), krw: Type.Integer({ description: "microkrw in whole KRW, rounded down" }) };
const amount = (micro: number) => ({ microkrw: micro, krw: Math.floor(micro / 1_000_000) });

export const InvoiceDetail = Type.Composite([
  Invoice,
  Type.Object({
    usage: Type.Object({
      ...Amount,
      by_member: Type.Array(
        Type.Object({
          account_id: Type.String({ description: "the member who created the assets (usage_records.account_id)" }),
          email: Nullable(Type.String()),
          display_name: Nullable(Type.String()),
          ...Amount,
          kinds: Type.Array(Type.Object({ kind: Type.String(), ...Amount })),
        }),
      ),
      by_kind: Type.Array(Type.Object({ kind: Type.String(), ...Amount })),
    }),
  }),
]);

/** The detail: exact usage records by member and kind; their sum differs from total_krw by under 1 KRW of carry. */
export function invoiceDetailView(i: InvoiceRow, lines: LineRow[]) {
  const members = new Map<string, { l: LineRow; micro: number; kinds: { kind: string; micro: number }[] }>();
  const kinds = new Map<string, number>();
  for (const l of lines) {
    const m = members.get(l.account_id) ?? { l, micro: 0, kinds: [] };
    m.micro += l.usage_microkrw;
    m.kinds.push({ kind: l.kind, micro: l.usage_microkrw });
    members.set(l.account_id, m);
    kinds.set(l.kind, (kinds.get(l.kind) ?? 0) + l.usage_microkrw);
  }
  return {
    ...invoiceView(i),
    usage: {
      ...amount(lines.reduce((s, l) => s + l.usage_microkrw, 0)),
      by_member: [...members.values()].map((m) => ({
        account_id: m.l.account_id,
        email: m.l.email,
        display_name: m.l.display_name,
        ...amount(m.micro),
        kinds: m.kinds.map((k) => ({ kind: k.kind, ...amount(k.micro) })),
      })),
      by_kind: [...kinds.entries()].sort().map(([kind, micro]) => ({ kind, ...amount(micro) })),
    },
  };
}
