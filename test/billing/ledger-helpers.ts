/**
 * Shared by the ledger-*.test.ts files: the invariants checked after concurrent traffic (over the whole
 * test database, which each test file has to itself) and builders for wallets and postings.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { signup, type TestApp } from "../helpers/app.js";
import type { Db } from "../../src/store/db.js";
import { walletFor, type PostInput, type Wallet } from "../../src/billing/ledger/ledger.js";

/** The entries of each currency sum to zero (and there are some). */
export const zeroSum = async (db: Db) => {
  const { rows } = await db.query<{ currency: string; sum: number; n: number }>(
    "SELECT currency, sum(amount)::bigint AS sum, count(*)::int AS n FROM ledger_entries GROUP BY currency",
  );
  assert.ok(rows.length > 0);
  for (const r of rows) assert.equal(r.sum, 0, `entries of ${r.currency} sum to zero`);
};

/** Each non-system wallet's cached balance is the sum of its entries and its last entry's balance_after. */
export const cacheMatches = async (db: Db) => {
  const { rows } = await db.query<{ id: string; balance: number; sum: number; last: number | null }>(
    `SELECT w.id, w.balance, coalesce((SELECT sum(amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0)::bigint AS sum,
            (SELECT balance_after FROM ledger_entries e WHERE e.wallet_id = w.id ORDER BY id DESC LIMIT 1) AS last
       FROM ledger_wallets w WHERE w.balance IS NOT NULL`,
  );
  for (const r of rows) {
    assert.equal(r.balance, r.sum, `wallet ${r.id}: cached balance equals the sum of its entries`);
    if (r.last !== null)
      assert.equal(r.last, r.balance, `wallet ${r.id}: the last entry's balance_after is the balance`);
  }
};

/** The KRW wallet of a new account. */
export const account = async (t: TestApp) => {
  const u = await signup(t.app);
  return walletFor(t.db, { kind: "account", id: u.id }, "KRW");
};

export const topup = (w: Wallet, amount: number, clearing: Wallet, key = `topup:${randomUUID()}`): PostInput => ({
  currency: w.currency,
  source: { type: "topup", id: key },
  idempotencyKey: key,
  legs: [
    { walletId: w.id, amount },
    { walletId: clearing.id, amount: -amount },
  ],
});

export const debitOf = (w: Wallet, to: Wallet, amount: number): PostInput => {
  const key = `debit:${randomUUID()}`;
  return {
    currency: w.currency,
    source: { type: "usage", id: key },
    idempotencyKey: key,
    legs: [
      { walletId: w.id, amount: -amount },
      { walletId: to.id, amount },
    ],
  };
};

/** Whether p has settled within ms (a post that should be waiting has not). */
export const settledWithin = async (p: Promise<unknown>, ms: number) => {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setTimeout(r, ms));
  return done;
};
