/**
 * Ledger tests (src/billing/ledger/): postMany (all or nothing, in order, replayable) and the coalescing of
 * concurrent post(pool) calls (PostQueue).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createPool, type Db } from "../../src/store/db.js";
import {
  LedgerError,
  balance,
  newTransactionId,
  post,
  postMany,
  systemWallet,
  type PostInput,
} from "../../src/billing/ledger/ledger.js";
import { account, cacheMatches, debitOf, topup, zeroSum } from "./ledger-helpers.js";

describe("ledger: postMany and coalesced post(pool) batches", () => {
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

  test("postMany is all-or-nothing and applies the floor in order", async () => {
    const a = await account(t);
    const b = await account(t);
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, topup(a, 50, clearing));
    const tr = (amount: number): PostInput => ({
      currency: "KRW",
      source: { type: "transfer", id: "m" },
      idempotencyKey: randomUUID(),
      legs: [
        { walletId: a.id, amount: -amount },
        { walletId: b.id, amount },
      ],
    });
    await assert.rejects(postMany(t.db, [tr(30), tr(30)]), (e: LedgerError) => e.code === "insufficient_funds");
    assert.equal(await balance(t.db, a.id), 50, "the first of the batch was not applied either");
    const done = await postMany(t.db, [tr(30), tr(20)]);
    assert.deepEqual(
      done.map((d) => d.transaction.entries.find((e) => e.wallet_id === a.id)!.balance_after),
      [20, 0],
    );
    assert.equal(await balance(t.db, b.id), 50);
    await cacheMatches(t.db);
  });

  test("concurrent post(pool) calls stand alone: a key twice in one burst, refusals beside successes", async () => {
    const w = await account(t);
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    await post(t.db, topup(w, 100, clearing));
    const debit = (amount: number, key = randomUUID()): PostInput => ({
      currency: "KRW",
      source: { type: "usage", id: key },
      idempotencyKey: key,
      legs: [
        { walletId: w.id, amount: -amount },
        { walletId: rev.id, amount },
      ],
    });
    const twice = debit(30);
    const poorTwice = debit(1_000);
    const outcomes = await Promise.allSettled([
      post(wide, twice),
      post(wide, {
        ...twice,
        legs: [
          { walletId: w.id, amount: -31 },
          { walletId: rev.id, amount: 31 },
        ],
      }),
      post(wide, twice),
      post(wide, poorTwice),
      post(wide, poorTwice),
      post(wide, debit(50)),
      post(wide, debit(50)),
      post(wide, { ...debit(0), legs: [] }),
    ]);
    const [a, b, c, p1, p2, d1, d2, bad] = outcomes;
    assert.ok(a.status === "fulfilled" && a.value.created);
    assert.ok(b.status === "rejected" && (b.reason as LedgerError).code === "idempotency_conflict");
    assert.ok(c.status === "fulfilled" && !c.value.created && c.value.transaction.id === a.value.transaction.id);
    for (const p of [p1, p2])
      assert.ok(p.status === "rejected" && (p.reason as LedgerError).code === "insufficient_funds");
    assert.equal(
      [d1, d2].filter((d) => d.status === "fulfilled").length,
      1,
      "100 - 30 leaves room for one debit of 50",
    );
    assert.ok(bad.status === "rejected" && (bad.reason as LedgerError).code === "unbalanced");
    assert.equal(await balance(t.db, w.id), 20);
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("a coalesced posting that fails as a whole (not a refusal) fails alone", async () => {
    const w = await account(t);
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const good = Array.from({ length: 6 }, () => topup(w, 5, clearing));
    const bad: PostInput = {
      ...topup(w, 5, clearing),
      legs: [
        { walletId: "not-a-uuid", amount: 5 },
        { walletId: clearing.id, amount: -5 },
      ],
    };
    const outcomes = await Promise.allSettled(
      [...good.slice(0, 3), bad, ...good.slice(3)].map((input) => post(wide, input)),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"],
    );
    assert.ok(
      !((outcomes[3] as PromiseRejectedResult).reason instanceof LedgerError),
      "a database error, not a refusal",
    );
    assert.equal(await balance(t.db, w.id), 30);
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("postMany with many postings sharing wallets: one statement, in order, replayable as a whole", async () => {
    const ws = await Promise.all(Array.from({ length: 5 }, () => account(t)));
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    await postMany(
      t.db,
      ws.map((w) => topup(w, 1_000, clearing)),
    );
    const inputs: PostInput[] = Array.from({ length: 600 }, (_, i) => {
      const w = ws[i % 5];
      const key = `many:${i}:${randomUUID()}`;
      return {
        currency: "KRW",
        source: { type: "usage", id: key },
        idempotencyKey: key,
        memo: `m${i}`,
        legs: [
          { walletId: w.id, amount: -(i % 7) - 1 },
          { walletId: rev.id, amount: (i % 7) + 1 },
        ],
      };
    });
    const early = newTransactionId();
    await new Promise((r) => setTimeout(r, 2));
    const done = await postMany(wide, inputs, { overdraft: true });
    assert.ok(early < done[0].transaction.id, "later ids sort after earlier ones");
    assert.equal(done.length, 600);
    const expected = new Map(ws.map((w) => [w.id, 1_000]));
    done.forEach((d, i) => {
      assert.equal(d.created, true);
      assert.equal(d.transaction.idempotency_key, inputs[i].idempotencyKey);
      assert.equal(d.transaction.memo, `m${i}`);
      assert.match(
        d.transaction.id,
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        "a time-ordered id (UUIDv7)",
      );
      if (i) assert.ok(d.transaction.seq > done[i - 1].transaction.seq, "seq follows the input order");
      const mine = d.transaction.entries.find((e) => e.wallet_id !== rev.id)!;
      expected.set(mine.wallet_id, expected.get(mine.wallet_id)! + mine.amount);
      assert.equal(mine.balance_after, expected.get(mine.wallet_id));
      assert.equal(d.transaction.entries.find((e) => e.wallet_id === rev.id)!.balance_after, null);
    });
    for (const w of ws) assert.equal(await balance(t.db, w.id), expected.get(w.id));
    const overdue = (
      await t.db.query<{ id: string; overdue_since: Date | null }>(
        "SELECT id, overdue_since FROM ledger_wallets WHERE id = ANY($1)",
        [ws.map((w) => w.id)],
      )
    ).rows;
    for (const o of overdue)
      assert.equal(o.overdue_since !== null, expected.get(o.id)! < 0, "overdue exactly when below 0");
    // the whole batch again: all replays; with one more posting: only that one is new; with one changed: a conflict and nothing written
    const again = await postMany(t.db, inputs, { overdraft: true });
    assert.deepEqual(
      again.map((a) => [a.created, a.transaction.id]),
      done.map((d) => [false, d.transaction.id]),
    );
    const extra = debitOf(ws[0], rev, 1);
    const mixed = await postMany(t.db, [...inputs.slice(0, 3), extra, ...inputs.slice(3, 6)], { overdraft: true });
    assert.deepEqual(
      mixed.map((m) => m.created),
      [false, false, false, true, false, false, false],
    );
    const before = await balance(t.db, ws[0].id);
    await assert.rejects(
      postMany(t.db, [debitOf(ws[0], rev, 1), { ...inputs[7], source: { type: "usage", id: "other" } }], {
        overdraft: true,
      }),
      (e: LedgerError) => e.code === "idempotency_conflict" && e.details.transaction_id === done[7].transaction.id,
    );
    assert.equal(await balance(t.db, ws[0].id), before);
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });
});
