/**
 * Ledger tests (src/billing/ledger/): concurrent debits against the prepaid floor, overdraft and overdue, and
 * random traffic keeping every invariant.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createPool, type Db } from "../../src/store/db.js";
import { balance, post, systemWallet, type PostInput, type LedgerError } from "../../src/billing/ledger/ledger.js";
import { account, cacheMatches, topup, zeroSum } from "./ledger-helpers.js";

describe("ledger: the prepaid floor under concurrency", () => {
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

  test("200 concurrent debits never take a prepaid wallet below 0: exactly the affordable ones succeed", async () => {
    const payer = await account(t);
    const payee = await account(t);
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, topup(payer, 1_000, clearing));
    const attempts = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        post(wide, {
          currency: "KRW",
          source: { type: "transfer", id: `t${i}` },
          idempotencyKey: `transfer:${randomUUID()}`,
          legs: [
            { walletId: payer.id, amount: -30 },
            { walletId: payee.id, amount: 30 },
          ],
        }),
      ),
    );
    const ok = attempts.filter((a) => a.status === "fulfilled").length;
    const refused = attempts.filter((a) => a.status === "rejected");
    assert.equal(ok, 33, "1000 / 30 = 33 transfers fit");
    for (const r of refused)
      assert.equal(((r as PromiseRejectedResult).reason as LedgerError).code, "insufficient_funds");
    assert.equal(await balance(t.db, payer.id), 10);
    assert.equal(await balance(t.db, payee.id), 990);
    const { rows } = await t.db.query<{ min: number }>(
      "SELECT min(balance_after)::bigint AS min FROM ledger_entries WHERE wallet_id = $1",
      [payer.id],
    );
    assert.ok(rows[0].min >= 0, "no entry ever left the wallet below 0");
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("concurrent usage overdrafts all land, the wallet goes overdue, and a top-up clears it", async () => {
    const w = await account(t);
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, topup(w, 100, clearing));
    const usage = (i: number): PostInput => ({
      currency: "KRW",
      source: { type: "usage", id: `u${i}` },
      idempotencyKey: `usage:${randomUUID()}`,
      legs: [
        { walletId: w.id, amount: -7 },
        { walletId: rev.id, amount: 7 },
      ],
    });
    // without overdraft a debit beyond the balance is refused
    await assert.rejects(
      post(t.db, {
        ...usage(-1),
        legs: [
          { walletId: w.id, amount: -101 },
          { walletId: rev.id, amount: 101 },
        ],
      }),
      (e: LedgerError) => e.code === "insufficient_funds" && e.status === 402,
    );
    await Promise.all(Array.from({ length: 40 }, (_, i) => post(wide, usage(i), { overdraft: true })));
    assert.equal(await balance(t.db, w.id), 100 - 280);
    const over = (await t.db.query("SELECT overdue_since FROM ledger_wallets WHERE id = $1", [w.id])).rows[0]
      .overdue_since;
    assert.ok(over instanceof Date, "overdue once below 0");
    await post(t.db, topup(w, 100, clearing));
    assert.ok(
      (await t.db.query("SELECT overdue_since FROM ledger_wallets WHERE id = $1", [w.id])).rows[0].overdue_since,
      "still below 0: still overdue",
    );
    await post(t.db, topup(w, 80, clearing));
    assert.equal(await balance(t.db, w.id), 0);
    assert.equal(
      (await t.db.query("SELECT overdue_since FROM ledger_wallets WHERE id = $1", [w.id])).rows[0].overdue_since,
      null,
    );
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("random concurrent traffic over many wallets keeps every invariant", async () => {
    const ws = await Promise.all(Array.from({ length: 8 }, () => account(t)));
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    for (const w of ws) await post(t.db, topup(w, 200, clearing));
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const jobs = Array.from({ length: 300 }, (_, i) => {
      const from = ws[rnd(ws.length)];
      const to = ws.filter((w) => w !== from)[rnd(ws.length - 1)];
      const amount = 1 + rnd(60);
      const kind = rnd(3);
      const input: PostInput =
        kind === 0
          ? {
              currency: "KRW",
              source: { type: "usage", id: `r${i}` },
              idempotencyKey: `r${i}-${randomUUID()}`,
              legs: [
                { walletId: from.id, amount: -amount },
                { walletId: rev.id, amount },
              ],
            }
          : kind === 1
            ? topup(from, amount, clearing)
            : {
                currency: "KRW",
                source: { type: "transfer", id: `r${i}` },
                idempotencyKey: `r${i}-${randomUUID()}`,
                legs: [
                  { walletId: from.id, amount: -amount },
                  { walletId: to.id, amount },
                ],
              };
      return post(wide, input, { overdraft: kind === 0 }).catch((e: LedgerError) => {
        if (e.code !== "insufficient_funds") throw e;
      });
    });
    await Promise.all(jobs);
    await zeroSum(t.db);
    await cacheMatches(t.db);
    // non-overdraft debits never crossed 0: any negative balance_after comes from a usage entry
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id
        WHERE e.wallet_id = ANY($1) AND e.amount < 0 AND e.balance_after < 0 AND x.source_type <> 'usage'`,
      [ws.map((w) => w.id)],
    );
    assert.equal(rows[0].n, 0);
  });
});
