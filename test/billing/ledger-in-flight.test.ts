/**
 * Ledger tests (src/billing/ledger/): posts inside callers' own transactions racing a first post of the same key
 * that has not committed yet.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createPool, inTransaction, type Db } from "../../src/store/db.js";
import {
  LedgerError,
  balance,
  post,
  postMany,
  systemWallet,
  type PostInput,
  type Wallet,
} from "../../src/billing/ledger/ledger.js";
import { account, cacheMatches, settledWithin, topup, zeroSum } from "./ledger-helpers.js";

describe("ledger: keys in flight in callers' transactions", () => {
  let t: TestApp;
  // a wider pool than the app's, so concurrent posts really run concurrently
  let wide: Db;
  before(async () => {
    t = await createTestApp();
    wide = createPool(t.url, 30);
  });
  after(async () => {
    await wide.end();
    await t.close();
  });

  test("posts in callers' own transactions: 30 concurrent first posts with one key make one transaction, the others wait and replay", async () => {
    const w = await account(t);
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const input = topup(w, 700, clearing);
    const results = await Promise.all(Array.from({ length: 30 }, () => inTransaction(wide, (tx) => post(tx, input))));
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.transaction.id)).size, 1);
    for (const r of results) assert.deepEqual(r.transaction.entries.map((e) => e.amount).sort(), [-700, 700]);
    assert.equal(await balance(t.db, w.id), 700);
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("a post waits for a concurrent first post of its key in flight and replays it (user wallets, system wallets only)", async () => {
    const w = await account(t);
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const adjustments = await systemWallet(t.db, "adjustments", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const key = `inflight:${randomUUID()}`;
    const between = (a: Wallet, b: Wallet, amount: number, k: string): PostInput => ({
      currency: "KRW",
      source: { type: "adjustment", id: k },
      idempotencyKey: k,
      legs: [
        { walletId: a.id, amount },
        { walletId: b.id, amount: -amount },
      ],
    });
    for (const input of [topup(w, 300, clearing), between(rev, adjustments, 5, key)]) {
      const first = await wide.connect();
      try {
        await first.query("BEGIN");
        const mine = await post(first, input);
        assert.equal(mine.created, true);
        // through the pool (coalesced) and in a caller's transaction: both wait for the first to commit
        const viaPool = post(wide, input);
        const viaTx = inTransaction(wide, (tx) => post(tx, input));
        assert.equal(await settledWithin(Promise.all([viaPool, viaTx]), 300), false, "the second post waits");
        await first.query("COMMIT");
        for (const r of await Promise.all([viaPool, viaTx])) {
          assert.equal(r.created, false);
          assert.equal(r.transaction.id, mine.transaction.id);
          assert.equal(r.transaction.entries.length, 2);
        }
      } finally {
        first.release();
      }
    }
    assert.equal(await balance(t.db, w.id), 300);
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("other content under a key in flight is a conflict; refusals leave the caller's transaction usable", async () => {
    const w = await account(t);
    const adjustments = await systemWallet(t.db, "adjustments", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const key = `inflight:${randomUUID()}`;
    const input: PostInput = {
      currency: "KRW",
      source: { type: "adjustment", id: key },
      idempotencyKey: key,
      legs: [
        { walletId: rev.id, amount: 9 },
        { walletId: adjustments.id, amount: -9 },
      ],
    };
    const first = await wide.connect();
    try {
      await first.query("BEGIN");
      const mine = await post(first, input);
      const other = inTransaction(wide, async (tx) => {
        const err = await post(tx, {
          ...input,
          legs: [
            { walletId: rev.id, amount: 8 },
            { walletId: adjustments.id, amount: -8 },
          ],
        }).catch((e: unknown) => e);
        // still usable after the refusal: a debit beyond the balance is refused too, then a credit goes through
        const poor = await post(tx, {
          currency: "KRW",
          source: { type: "transfer", id: "x" },
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: w.id, amount: -1 },
            { walletId: rev.id, amount: 1 },
          ],
        }).catch((e: unknown) => e);
        const ok = await post(tx, {
          currency: "KRW",
          source: { type: "adjustment", id: "x" },
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: w.id, amount: 4 },
            { walletId: adjustments.id, amount: -4 },
          ],
        });
        return { err, poor, ok };
      });
      await new Promise((r) => setTimeout(r, 200));
      await first.query("COMMIT");
      const { err, poor, ok } = await other;
      assert.ok(err instanceof LedgerError && err.code === "idempotency_conflict", String(err));
      assert.equal(err.details.transaction_id, mine.transaction.id);
      assert.ok(poor instanceof LedgerError && poor.code === "insufficient_funds", String(poor));
      assert.deepEqual(poor.details, { wallet_id: w.id, balance: 0, needed: 1 });
      assert.equal(ok.created, true);
    } finally {
      first.release();
    }
    assert.equal(await balance(t.db, w.id), 4);
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("postMany racing a first post of one of its keys: a replay between system wallets, or a conflict that writes nothing", async () => {
    const w = await account(t);
    const adjustments = await systemWallet(t.db, "adjustments", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    for (const same of [true, false]) {
      const key = `race:${randomUUID()}`;
      const input: PostInput = {
        currency: "KRW",
        source: { type: "adjustment", id: key },
        idempotencyKey: key,
        legs: [
          { walletId: rev.id, amount: 3 },
          { walletId: adjustments.id, amount: -3 },
        ],
      };
      const credit = topup(w, 10, clearing);
      const first = await wide.connect();
      try {
        await first.query("BEGIN");
        const mine = await post(first, input);
        const batch = postMany(wide, [
          credit,
          same
            ? input
            : {
                ...input,
                legs: [
                  { walletId: rev.id, amount: 2 },
                  { walletId: adjustments.id, amount: -2 },
                ],
              },
        ]);
        assert.equal(await settledWithin(batch, 300), false, "the batch waits for the key in flight");
        await first.query("COMMIT");
        if (same) {
          const [c, r] = await batch;
          assert.equal(c.created, true);
          assert.equal(r.created, false);
          assert.equal(r.transaction.id, mine.transaction.id);
        } else {
          await assert.rejects(
            batch,
            (e: LedgerError) =>
              e instanceof LedgerError &&
              e.code === "idempotency_conflict" &&
              e.details.transaction_id === mine.transaction.id,
          );
        }
      } finally {
        first.release();
      }
    }
    assert.equal(await balance(t.db, w.id), 10, "the credit of the refused batch was not written");
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });
});
