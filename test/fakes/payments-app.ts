import pino from "pino";
import { call, createTestApp, type TestApp } from "../helpers/app.js";
import { startFakeStripe, type FakeStripe } from "./stripe.js";
import { startFakeToss, type FakeToss } from "./toss.js";
import { paymentDeps } from "../../src/billing/payments/jobs.js";
import type { PaymentDeps } from "../../src/billing/payments/service.js";

export const TOSS_WEBHOOK_KEY = "toss-webhook-key-0123456789abcdef";

export interface PaymentsTestApp {
  t: TestApp;
  stripe: FakeStripe;
  toss: FakeToss;
  /** what the periodic job gets, for running auto-recharge passes directly */
  deps: PaymentDeps;
  /** every webhook delivered through these helpers, for replay */
  delivered: { kind: "stripe" | "toss"; payload: string; signature?: string }[];
  sendStripe(event: unknown, opts?: { signature?: string; record?: boolean }): ReturnType<typeof call>;
  sendToss(
    paymentKey: string,
    opts?: { key?: string | null; body?: unknown; record?: boolean },
  ): ReturnType<typeof call>;
  /** balance of the account's wallet in ledger units (0 when it has none) */
  balance(accountId: string, currency: "KRW" | "USD"): Promise<number>;
  /** ledger transactions whose idempotency key starts with the prefix */
  postings(prefix: string): Promise<{ idempotency_key: string; source_type: string; amount: number }[]>;
  close(): Promise<void>;
}

/** The real app over a real database, with Stripe and Toss Payments replaced by local fakes. */
export async function startPaymentsApp(env: Record<string, string> = {}): Promise<PaymentsTestApp> {
  const stripe = await startFakeStripe();
  const toss = await startFakeToss();
  const t = await createTestApp({
    env: {
      STRIPE_API_BASE: stripe.url,
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      TOSS_API_BASE: toss.url,
      TOSS_SECRET_KEY: toss.secretKey,
      TOSS_WEBHOOK_KEY,
      BANK_DEPOSIT_BANK: "국민은행",
      BANK_DEPOSIT_ACCOUNT: "123-456-789012",
      BANK_DEPOSIT_HOLDER: "주식회사 플랫폼",
      ...env,
    },
  });
  const delivered: PaymentsTestApp["delivered"] = [];
  const deps = paymentDeps(t.db, t.config, pino({ level: "silent" }), t.platform.secrets);
  return {
    t,
    stripe,
    toss,
    deps,
    delivered,
    sendStripe(event, opts = {}) {
      const payload = typeof event === "string" ? event : JSON.stringify(event);
      const signature = opts.signature ?? stripe.sign(payload);
      if (opts.record !== false) delivered.push({ kind: "stripe", payload, signature });
      return call(t.app, {
        method: "POST",
        url: "/v1/billing/stripe/webhook",
        headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": signature },
        body: payload,
      });
    },
    sendToss(paymentKey, opts = {}) {
      const payload = JSON.stringify(opts.body ?? toss.webhookBody(paymentKey));
      const key = opts.key === undefined ? TOSS_WEBHOOK_KEY : opts.key;
      if (opts.record !== false) delivered.push({ kind: "toss", payload, signature: key ?? undefined });
      return call(t.app, {
        method: "POST",
        url: `/v1/billing/toss/webhook${key === null ? "" : `?key=${encodeURIComponent(key)}`}`,
        headers: { "content-type": "application/json" },
        body: payload,
      });
    },
    async balance(accountId, currency) {
      const { rows } = await t.db.query<{ balance: number }>(
        "SELECT balance FROM ledger_wallets WHERE owner_kind = 'account' AND owner_id = $1 AND currency = $2",
        [accountId, currency],
      );
      return rows[0]?.balance ?? 0;
    },
    async postings(prefix) {
      const { rows } = await t.db.query<{ idempotency_key: string; source_type: string; amount: number }>(
        `SELECT t.idempotency_key, t.source_type, sum(e.amount) FILTER (WHERE w.owner_kind = 'account')::bigint AS amount
           FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_wallets w ON w.id = e.wallet_id
          WHERE t.idempotency_key LIKE $1 GROUP BY t.id ORDER BY t.seq`,
        [`${prefix}%`],
      );
      return rows;
    },
    async close() {
      await t.close();
      await stripe.close();
      await toss.close();
    },
  };
}
