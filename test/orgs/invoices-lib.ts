/**
 * Fixtures of the organization invoice tests: the app with local Stripe and Toss fakes (a second platform over the
 * same store on request), the deps the invoice jobs get, and usage produced by billing's own metering from test
 * metering sources of company assets, in chosen past intervals.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import pino from "pino";
import { call, createTestApp, type TestApp } from "../helpers/app.js";
import { startFakeStripe, type FakeStripe } from "../fakes/stripe.js";
import { startFakeToss, type FakeToss } from "../fakes/toss.js";
import { paymentDeps } from "../../src/billing/payments/jobs.js";
import { meterInterval } from "../../src/billing/metering/meter.js";
import { prices } from "../../src/billing/catalog.js";
import type { MeteredResource, MeteringSource } from "../../src/kernel/contracts.js";
import type { ChargeDeps } from "../../src/orgs/invoices/charge.js";
import type { Person, TestOrg } from "./lib.js";

export const STEP = prices().meter_interval_seconds * 1000;
export const HOUR = 3_600_000;
const silent = pino({ level: "silent" });

export interface BillingApp {
  t: TestApp;
  stripe: FakeStripe;
  toss: FakeToss;
  env: Record<string, string>;
  deps: ChargeDeps;
  /** another platform over the same store (a second worker, or the platform after a restart) */
  platform(): Promise<{ t: TestApp; deps: ChargeDeps }>;
  close(): Promise<void>;
}

export const depsOf = (t: TestApp): ChargeDeps => ({
  db: t.db,
  payments: paymentDeps(t.db, t.config, silent, t.platform.secrets),
  log: silent,
});

export async function startBillingApp(): Promise<BillingApp> {
  const stripe = await startFakeStripe();
  const toss = await startFakeToss();
  const env = {
    STRIPE_API_BASE: stripe.url,
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    TOSS_API_BASE: toss.url,
    TOSS_SECRET_KEY: toss.secretKey,
  };
  const t = await createTestApp({ env });
  const others: TestApp[] = [];
  return {
    t,
    stripe,
    toss,
    env,
    deps: depsOf(t),
    async platform() {
      const other = await createTestApp({ env, databaseUrl: t.url });
      others.push(other);
      return { t: other, deps: depsOf(other) };
    },
    async close() {
      for (const o of others) await o.close().catch(() => {});
      await t.close();
      await stripe.close();
      await toss.close();
    },
  };
}

/** The start of the UTC month of `d`, and of the one before. */
export function months(d: Date): { prev: Date; cur: Date } {
  return {
    prev: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)),
    cur: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)),
  };
}

/** Company assets as their areas would report them to billing: a database per member and a pod of the owner. */
export function companyAssets(org: TestOrg): MeteringSource[] {
  const owner = { kind: "org" as const, id: org.id };
  const res = (accountId: string, kind: string, size: string, storageGb: number): MeteredResource => ({
    id: randomUUID(),
    owner,
    accountId,
    kind,
    size,
    storageGb,
    state: "running",
  });
  const dbs = [
    res(org.members[0].id, "database", "basic", 10),
    ...(org.members[1] ? [res(org.members[1].id, "database", "pro", 20)] : []),
  ];
  const pods = [res(org.owner.id, "pod", "cpu-small", 0)];
  const source = (kind: string, rows: MeteredResource[]): MeteringSource => ({
    kind,
    billable: async (_q, page) => (page.after ? [] : rows),
    billableOf: async () => [],
  });
  return [source("database", dbs), source("pod", pods)];
}

/** One GPU pod of the owner: 825 KRW per interval, enough for a charge in any single interval. */
export function gpuAsset(org: TestOrg): MeteringSource[] {
  const row: MeteredResource = {
    id: randomUUID(),
    owner: { kind: "org", id: org.id },
    accountId: org.owner.id,
    kind: "pod",
    size: "gpu-h100",
    storageGb: 0,
    state: "running",
  };
  return [{ kind: "pod", billable: async (_q, page) => (page.after ? [] : [row]), billableOf: async () => [] }];
}

/** Meters the sources in `count` intervals from `from` with billing's meter; returns the won it charged. */
export async function meter(t: TestApp, sources: MeteringSource[], from: Date, count = 1): Promise<number> {
  let krw = 0;
  for (let i = 0; i < count; i++)
    krw += (await meterInterval(t.db, sources, new Date(from.getTime() + i * STEP))).charged_krw;
  return krw;
}

/** Registers a card as the owner, asserting 201. */
export async function registerCard(b: BillingApp, who: Person, body: Record<string, unknown>) {
  const res = await call(b.t.app, { method: "POST", url: "/v1/org/billing/card", token: who.token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export const tossCard = (b: BillingApp, o: { decline?: boolean; number?: string } = {}) => ({
  provider: "toss",
  auth_key: b.toss.issueAuthKey(o),
});

/** Card billing as if registered at `at` (the registration answered now). */
export async function backdate(t: TestApp, orgId: string, at: Date): Promise<void> {
  const { rowCount } = await t.db.query("UPDATE org_card_billing SET registered_at = $2 WHERE org_id = $1", [
    orgId,
    at,
  ]);
  assert.equal(rowCount, 1);
}

export async function orgWallet(t: TestApp, orgId: string) {
  const { rows } = await t.db.query<{ id: string; balance: number; policy: string; overdue_since: Date | null }>(
    "SELECT id, balance, policy, overdue_since FROM ledger_wallets WHERE owner_kind = 'org' AND owner_id = $1 AND currency = 'KRW'",
    [orgId],
  );
  return rows[0];
}

/** The ledger's own figure: whole won of usage postings on the wallet for intervals starting in [from, to). */
export async function ledgerUsage(t: TestApp, walletId: string, from: Date, to: Date): Promise<number> {
  const { rows } = await t.db.query<{ krw: number }>(
    `SELECT coalesce(-sum(e.amount), 0)::bigint AS krw FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id
      WHERE e.wallet_id = $1 AND x.source_type = 'usage'
        AND (CASE WHEN x.source_type = 'usage' THEN x.source_id::timestamptz END) >= $2
        AND (CASE WHEN x.source_type = 'usage' THEN x.source_id::timestamptz END) < $3`,
    [walletId, from, to],
  );
  return rows[0].krw;
}

export async function invoicesOf(t: TestApp, orgId: string) {
  const { rows } = await t.db.query(
    "SELECT id, month, kind, period_start, period_end, total_krw, status, attempts, failures, next_attempt_at, charging_since, failure_code FROM org_invoices WHERE org_id = $1 ORDER BY period_start",
    [orgId],
  );
  return rows;
}

/** Toss payments made for an invoice (its order ids are inv-<invoice id>-<attempt>). */
export const tossPaymentsFor = (b: BillingApp, invoiceId: string) =>
  [...b.toss.payments.values()].filter((p) => String(p.orderId).startsWith(`inv-${invoiceId}-`));
