import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, signup, type TestApp } from "../helpers/app.js";
import { createPool, type Db } from "../../src/store/db.js";
import {
  LedgerError, balance, post, postMany, sumOfEntries, systemWallet, walletFor, type PostInput, type Wallet,
} from "../../src/billing/ledger/ledger.js";

describe("ledger", () => {
  let t: TestApp;
  // a wider pool than the app's, so concurrent posts really run concurrently
  let wide: Db;
  before(async () => { t = await createTestApp(); wide = createPool(t.url, 30); });
  after(async () => { await wide.end(); await t.close(); });

  const zeroSum = async () => {
    const { rows } = await t.db.query<{ currency: string; sum: number; n: number }>("SELECT currency, sum(amount)::bigint AS sum, count(*)::int AS n FROM ledger_entries GROUP BY currency");
    assert.ok(rows.length > 0);
    for (const r of rows) assert.equal(r.sum, 0, `entries of ${r.currency} sum to zero`);
  };
  const cacheMatches = async () => {
    const { rows } = await t.db.query<{ id: string; balance: number; sum: number; last: number | null }>(
      `SELECT w.id, w.balance, coalesce((SELECT sum(amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0)::bigint AS sum,
              (SELECT balance_after FROM ledger_entries e WHERE e.wallet_id = w.id ORDER BY id DESC LIMIT 1) AS last
         FROM ledger_wallets w WHERE w.balance IS NOT NULL`);
    for (const r of rows) {
      assert.equal(r.balance, r.sum, `wallet ${r.id}: cached balance equals the sum of its entries`);
      if (r.last !== null) assert.equal(r.last, r.balance, `wallet ${r.id}: the last entry's balance_after is the balance`);
    }
  };
  const account = async () => {
    const u = await signup(t.app);
    return walletFor(t.db, { kind: "account", id: u.id }, "KRW");
  };
  const topup = (w: Wallet, amount: number, clearing: Wallet, key = `topup:${randomUUID()}`): PostInput => ({
    currency: w.currency, source: { type: "topup", id: key }, idempotencyKey: key, legs: [{ walletId: w.id, amount }, { walletId: clearing.id, amount: -amount }],
  });

  test("walletFor creates one wallet per owner and currency, also when called concurrently", async () => {
    const u = await signup(t.app);
    const ws = await Promise.all(Array.from({ length: 20 }, () => walletFor(wide, { kind: "account", id: u.id }, "KRW")));
    assert.equal(new Set(ws.map((w) => w.id)).size, 1);
    assert.equal(ws[0].policy, "prepaid");
    assert.equal(ws[0].balance, 0);
    const usd = await walletFor(t.db, { kind: "account", id: u.id }, "USD");
    assert.notEqual(usd.id, ws[0].id);
    assert.equal((await walletFor(t.db, { kind: "partner", id: randomUUID() }, "KRW")).policy, "postpaid");
    assert.equal((await walletFor(t.db, { kind: "account", id: randomUUID() }, "KRW", { policy: "suite" })).policy, "suite");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    assert.equal(rev.policy, "system");
    assert.equal(rev.balance, null);
  });

  test("a top-up credits the wallet once; 50 concurrent posts with one key make one transaction", async () => {
    const w = await account();
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const input = topup(w, 10_000, clearing);
    const results = await Promise.all(Array.from({ length: 50 }, () => post(wide, input)));
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.transaction.id)).size, 1);
    assert.equal(await balance(t.db, w.id), 10_000);
    const again = await post(t.db, input);
    assert.equal(again.created, false);
    assert.deepEqual(again.transaction.entries.map((e) => e.amount).sort(), [-10_000, 10_000]);
    await assert.rejects(post(t.db, { ...input, legs: [{ walletId: w.id, amount: 5 }, { walletId: clearing.id, amount: -5 }] }),
      (e: LedgerError) => e.code === "idempotency_conflict" && e.status === 409);
    assert.equal(await balance(t.db, w.id), 10_000);
    await zeroSum();
    await cacheMatches();
  });

  test("unbalanced, fractional, zero, unknown-wallet and cross-currency posts are refused and write nothing", async () => {
    const w = await account();
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const revUsd = await systemWallet(t.db, "revenue", "USD");
    const before = (await t.db.query("SELECT count(*)::int AS n FROM ledger_transactions")).rows[0].n;
    const base = { currency: "KRW" as const, source: { type: "adjustment" as const, id: "x" } };
    const cases: [Parameters<typeof post>[1], string][] = [
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: w.id, amount: 10 }, { walletId: rev.id, amount: -9 }] }, "unbalanced"],
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: w.id, amount: 1.5 }, { walletId: rev.id, amount: -1.5 }] }, "invalid_amount"],
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: w.id, amount: 0 }, { walletId: rev.id, amount: 0 }] }, "invalid_amount"],
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: w.id, amount: 10 }] }, "unbalanced"],
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: randomUUID(), amount: 10 }, { walletId: rev.id, amount: -10 }] }, "unknown_wallet"],
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: w.id, amount: 10 }, { walletId: revUsd.id, amount: -10 }] }, "currency_mismatch"],
    ];
    for (const [input, code] of cases) await assert.rejects(post(t.db, input), (e: LedgerError) => e instanceof LedgerError && e.code === code, code);
    assert.equal((await t.db.query("SELECT count(*)::int AS n FROM ledger_transactions")).rows[0].n, before);
    assert.equal(await balance(t.db, w.id), 0);
  });

  test("the database refuses unbalanced entries and any update or delete (append-only)", async () => {
    const w = await account();
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const { transaction } = await post(t.db, topup(w, 500, clearing));
    await assert.rejects(t.db.query("UPDATE ledger_entries SET amount = amount + 1 WHERE transaction_id = $1", [transaction.id]), /append-only/);
    await assert.rejects(t.db.query("DELETE FROM ledger_entries WHERE transaction_id = $1", [transaction.id]), /append-only/);
    await assert.rejects(t.db.query("UPDATE ledger_transactions SET memo = 'x' WHERE id = $1", [transaction.id]), /append-only/);
    await assert.rejects(t.db.query("DELETE FROM ledger_transactions WHERE id = $1", [transaction.id]), /append-only/);
    await assert.rejects(t.db.query("INSERT INTO ledger_entries (transaction_id, wallet_id, currency, amount) VALUES ($1, $2, 'KRW', 7)", [transaction.id, w.id]), /does not balance/);
    const usd = await systemWallet(t.db, "revenue", "USD");
    await assert.rejects(t.db.query(
      "INSERT INTO ledger_entries (transaction_id, wallet_id, currency, amount) VALUES ($1, $2, 'KRW', 7), ($1, $3, 'USD', -7)", [transaction.id, w.id, usd.id]), /foreign key/);
    assert.equal(await balance(t.db, w.id), 500);
    await zeroSum();
  });

  test("200 concurrent debits never take a prepaid wallet below 0: exactly the affordable ones succeed", async () => {
    const payer = await account();
    const payee = await account();
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, topup(payer, 1_000, clearing));
    const attempts = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => post(wide, {
      currency: "KRW", source: { type: "transfer", id: `t${i}` }, idempotencyKey: `transfer:${randomUUID()}`,
      legs: [{ walletId: payer.id, amount: -30 }, { walletId: payee.id, amount: 30 }],
    })));
    const ok = attempts.filter((a) => a.status === "fulfilled").length;
    const refused = attempts.filter((a) => a.status === "rejected");
    assert.equal(ok, 33, "1000 / 30 = 33 transfers fit");
    for (const r of refused) assert.equal(((r as PromiseRejectedResult).reason as LedgerError).code, "insufficient_funds");
    assert.equal(await balance(t.db, payer.id), 10);
    assert.equal(await balance(t.db, payee.id), 990);
    const { rows } = await t.db.query<{ min: number }>("SELECT min(balance_after)::bigint AS min FROM ledger_entries WHERE wallet_id = $1", [payer.id]);
    assert.ok(rows[0].min >= 0, "no entry ever left the wallet below 0");
    await zeroSum();
    await cacheMatches();
  });

  test("concurrent usage overdrafts all land, the wallet goes overdue, and a top-up clears it", async () => {
    const w = await account();
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, topup(w, 100, clearing));
    const usage = (i: number): PostInput => ({
      currency: "KRW", source: { type: "usage", id: `u${i}` }, idempotencyKey: `usage:${randomUUID()}`, legs: [{ walletId: w.id, amount: -7 }, { walletId: rev.id, amount: 7 }],
    });
    // without overdraft a debit beyond the balance is refused
    await assert.rejects(post(t.db, { ...usage(-1), legs: [{ walletId: w.id, amount: -101 }, { walletId: rev.id, amount: 101 }] }), (e: LedgerError) => e.code === "insufficient_funds" && e.status === 402);
    await Promise.all(Array.from({ length: 40 }, (_, i) => post(wide, usage(i), { overdraft: true })));
    assert.equal(await balance(t.db, w.id), 100 - 280);
    const over = (await t.db.query("SELECT overdue_since FROM ledger_wallets WHERE id = $1", [w.id])).rows[0].overdue_since;
    assert.ok(over instanceof Date, "overdue once below 0");
    await post(t.db, topup(w, 100, clearing));
    assert.ok((await t.db.query("SELECT overdue_since FROM ledger_wallets WHERE id = $1", [w.id])).rows[0].overdue_since, "still below 0: still overdue");
    await post(t.db, topup(w, 80, clearing));
    assert.equal(await balance(t.db, w.id), 0);
    assert.equal((await t.db.query("SELECT overdue_since FROM ledger_wallets WHERE id = $1", [w.id])).rows[0].overdue_since, null);
    await zeroSum();
    await cacheMatches();
  });

  test("postpaid and suite wallets have no floor; system wallet balances are the sum of their entries", async () => {
    const partner = await walletFor(t.db, { kind: "partner", id: randomUUID() }, "USD");
    const suite = await walletFor(t.db, { kind: "account", id: randomUUID() }, "KRW", { policy: "suite" });
    const revUsd = await systemWallet(t.db, "revenue", "USD");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const revBefore = await balance(t.db, rev.id);
    await post(t.db, { currency: "USD", source: { type: "usage", id: "p" }, idempotencyKey: randomUUID(), legs: [{ walletId: partner.id, amount: -2_500_000 }, { walletId: revUsd.id, amount: 2_500_000 }] });
    await post(t.db, { currency: "KRW", source: { type: "usage", id: "s" }, idempotencyKey: randomUUID(), legs: [{ walletId: suite.id, amount: -999 }, { walletId: rev.id, amount: 999 }] });
    assert.equal(await balance(t.db, partner.id), -2_500_000);
    assert.equal(await balance(t.db, suite.id), -999);
    assert.equal(await balance(t.db, rev.id), revBefore + 999);
    assert.equal(await balance(t.db, rev.id), await sumOfEntries(t.db, rev.id));
    const overdue = (await t.db.query("SELECT count(*)::int AS n FROM ledger_wallets WHERE id = ANY($1) AND overdue_since IS NOT NULL", [[partner.id, suite.id]])).rows[0].n;
    assert.equal(overdue, 0, "postpaid debt is not overdue");
  });

  test("postMany is all-or-nothing and applies the floor in order", async () => {
    const a = await account();
    const b = await account();
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, topup(a, 50, clearing));
    const tr = (amount: number): PostInput => ({ currency: "KRW", source: { type: "transfer", id: "m" }, idempotencyKey: randomUUID(), legs: [{ walletId: a.id, amount: -amount }, { walletId: b.id, amount }] });
    await assert.rejects(postMany(t.db, [tr(30), tr(30)]), (e: LedgerError) => e.code === "insufficient_funds");
    assert.equal(await balance(t.db, a.id), 50, "the first of the batch was not applied either");
    const done = await postMany(t.db, [tr(30), tr(20)]);
    assert.deepEqual(done.map((d) => d.transaction.entries.find((e) => e.wallet_id === a.id)!.balance_after), [20, 0]);
    assert.equal(await balance(t.db, b.id), 50);
    await cacheMatches();
  });

  test("random concurrent traffic over many wallets keeps every invariant", async () => {
    const ws = await Promise.all(Array.from({ length: 8 }, () => account()));
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    for (const w of ws) await post(t.db, topup(w, 200, clearing));
    let seed = 42;
    const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    const jobs = Array.from({ length: 300 }, (_, i) => {
      const from = ws[rnd(ws.length)];
      const to = ws.filter((w) => w !== from)[rnd(ws.length - 1)];
      const amount = 1 + rnd(60);
      const kind = rnd(3);
      const input: PostInput = kind === 0
        ? { currency: "KRW", source: { type: "usage", id: `r${i}` }, idempotencyKey: `r${i}-${randomUUID()}`, legs: [{ walletId: from.id, amount: -amount }, { walletId: rev.id, amount }] }
        : kind === 1 ? topup(from, amount, clearing)
        : { currency: "KRW", source: { type: "transfer", id: `r${i}` }, idempotencyKey: `r${i}-${randomUUID()}`, legs: [{ walletId: from.id, amount: -amount }, { walletId: to.id, amount }] };
      return post(wide, input, { overdraft: kind === 0 }).catch((e: LedgerError) => { if (e.code !== "insufficient_funds") throw e; });
    });
    await Promise.all(jobs);
    await zeroSum();
    await cacheMatches();
    // non-overdraft debits never crossed 0: any negative balance_after comes from a usage entry
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id
        WHERE e.wallet_id = ANY($1) AND e.amount < 0 AND e.balance_after < 0 AND x.source_type <> 'usage'`, [ws.map((w) => w.id)]);
    assert.equal(rows[0].n, 0);
  });
});
