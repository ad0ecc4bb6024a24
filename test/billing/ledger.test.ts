import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, signup, type TestApp } from "../helpers/app.js";
import { LedgerError, balance, post, sumOfEntries, systemWallet, walletFor } from "../../src/billing/ledger/ledger.js";

describe("ledger", () => {
  let t: TestApp;
  before(async () => { t = await createTestApp(); });
  after(async () => { await t.close(); });

  const zeroSum = async () => {
    const { rows } = await t.db.query<{ currency: string; sum: number }>("SELECT currency, sum(amount)::bigint AS sum FROM ledger_entries GROUP BY currency");
    for (const r of rows) assert.equal(r.sum, 0, `entries of ${r.currency} sum to zero`);
  };
  const cacheMatches = async () => {
    const { rows } = await t.db.query<{ id: string; balance: number; sum: number }>(
      `SELECT w.id, w.balance, coalesce((SELECT sum(amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0)::bigint AS sum
       FROM ledger_wallets w WHERE w.balance IS NOT NULL`);
    for (const r of rows) assert.equal(r.balance, r.sum, `wallet ${r.id}: cached balance equals the sum of its entries`);
  };

  test("a top-up credits the wallet once; a replay with the same key is a no-op", async () => {
    const u = await signup(t.app);
    const w = await walletFor(t.db, { kind: "account", id: u.id }, "KRW");
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const input = { currency: "KRW" as const, source: { type: "topup" as const, id: "tp1" }, idempotencyKey: `topup:${randomUUID()}`, legs: [{ walletId: w.id, amount: 10_000 }, { walletId: clearing.id, amount: -10_000 }] };
    const first = await post(t.db, input);
    assert.equal(first.created, true);
    const again = await Promise.all(Array.from({ length: 20 }, () => post(t.db, input)));
    for (const r of again) { assert.equal(r.created, false); assert.equal(r.transaction.id, first.transaction.id); }
    assert.equal(await balance(t.db, w.id), 10_000);
    await assert.rejects(post(t.db, { ...input, legs: [{ walletId: w.id, amount: 5 }, { walletId: clearing.id, amount: -5 }] }), (e: LedgerError) => e.code === "idempotency_conflict");
    await zeroSum(); await cacheMatches();
  });
});
