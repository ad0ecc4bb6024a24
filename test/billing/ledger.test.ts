import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, signup, type TestApp } from "../helpers/app.js";
import { createPool, inTransaction, type Db } from "../../src/store/db.js";
import {
  LedgerError,
  balance,
  newTransactionId,
  post,
  postMany,
  sumOfEntries,
  systemWallet,
  walletFor,
  type PostInput,
  type Wallet,
} from "../../src/billing/ledger/ledger.js";

describe("ledger", () => {
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

  const zeroSum = async () => {
    const { rows } = await t.db.query<{ currency: string; sum: number; n: number }>(
      "SELECT currency, sum(amount)::bigint AS sum, count(*)::int AS n FROM ledger_entries GROUP BY currency",
    );
    assert.ok(rows.length > 0);
    for (const r of rows) assert.equal(r.sum, 0, `entries of ${r.currency} sum to zero`);
  };
  const cacheMatches = async () => {
    const { rows } = await t.db.query<{ id: string; balance: number; sum: number; last: number | null }>(
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
  const account = async () => {
    const u = await signup(t.app);
    return walletFor(t.db, { kind: "account", id: u.id }, "KRW");
  };
  const topup = (w: Wallet, amount: number, clearing: Wallet, key = `topup:${randomUUID()}`): PostInput => ({
    currency: w.currency,
    source: { type: "topup", id: key },
    idempotencyKey: key,
    legs: [
      { walletId: w.id, amount },
      { walletId: clearing.id, amount: -amount },
    ],
  });

  const debitOf = (w: Wallet, to: Wallet, amount: number): PostInput => {
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

  test("walletFor creates one wallet per owner and currency, also when called concurrently", async () => {
    const u = await signup(t.app);
    const ws = await Promise.all(
      Array.from({ length: 20 }, () => walletFor(wide, { kind: "account", id: u.id }, "KRW")),
    );
    assert.equal(new Set(ws.map((w) => w.id)).size, 1);
    assert.equal(ws[0].policy, "prepaid");
    assert.equal(ws[0].balance, 0);
    const usd = await walletFor(t.db, { kind: "account", id: u.id }, "USD");
    assert.notEqual(usd.id, ws[0].id);
    assert.equal((await walletFor(t.db, { kind: "partner", id: randomUUID() }, "KRW")).policy, "postpaid");
    assert.equal(
      (await walletFor(t.db, { kind: "account", id: randomUUID() }, "KRW", { policy: "suite" })).policy,
      "suite",
    );
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
    await assert.rejects(
      post(t.db, {
        ...input,
        legs: [
          { walletId: w.id, amount: 5 },
          { walletId: clearing.id, amount: -5 },
        ],
      }),
      (e: LedgerError) => e.code === "idempotency_conflict" && e.status === 409,
    );
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
      [
        {
          ...base,
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: w.id, amount: 10 },
            { walletId: rev.id, amount: -9 },
          ],
        },
        "unbalanced",
      ],
      [
        {
          ...base,
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: w.id, amount: 1.5 },
            { walletId: rev.id, amount: -1.5 },
          ],
        },
        "invalid_amount",
      ],
      [
        {
          ...base,
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: w.id, amount: 0 },
            { walletId: rev.id, amount: 0 },
          ],
        },
        "invalid_amount",
      ],
      [{ ...base, idempotencyKey: randomUUID(), legs: [{ walletId: w.id, amount: 10 }] }, "unbalanced"],
      [
        {
          ...base,
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: randomUUID(), amount: 10 },
            { walletId: rev.id, amount: -10 },
          ],
        },
        "unknown_wallet",
      ],
      [
        {
          ...base,
          idempotencyKey: randomUUID(),
          legs: [
            { walletId: w.id, amount: 10 },
            { walletId: revUsd.id, amount: -10 },
          ],
        },
        "currency_mismatch",
      ],
    ];
    for (const [input, code] of cases)
      await assert.rejects(post(t.db, input), (e: LedgerError) => e instanceof LedgerError && e.code === code, code);
    assert.equal((await t.db.query("SELECT count(*)::int AS n FROM ledger_transactions")).rows[0].n, before);
    assert.equal(await balance(t.db, w.id), 0);
  });

  test("the database refuses unbalanced entries and any update or delete (append-only)", async () => {
    const w = await account();
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const { transaction } = await post(t.db, topup(w, 500, clearing));
    await assert.rejects(
      t.db.query("UPDATE ledger_entries SET amount = amount + 1 WHERE transaction_id = $1", [transaction.id]),
      /append-only/,
    );
    await assert.rejects(
      t.db.query("DELETE FROM ledger_entries WHERE transaction_id = $1", [transaction.id]),
      /append-only/,
    );
    await assert.rejects(
      t.db.query("UPDATE ledger_transactions SET memo = 'x' WHERE id = $1", [transaction.id]),
      /append-only/,
    );
    await assert.rejects(t.db.query("DELETE FROM ledger_transactions WHERE id = $1", [transaction.id]), /append-only/);
    await assert.rejects(
      t.db.query("INSERT INTO ledger_entries (transaction_id, wallet_id, currency, amount) VALUES ($1, $2, 'KRW', 7)", [
        transaction.id,
        w.id,
      ]),
      /does not balance/,
    );
    const usd = await systemWallet(t.db, "revenue", "USD");
    await assert.rejects(
      t.db.query(
        "INSERT INTO ledger_entries (transaction_id, wallet_id, currency, amount) VALUES ($1, $2, 'KRW', 7), ($1, $3, 'USD', -7)",
        [transaction.id, w.id, usd.id],
      ),
      /foreign key/,
    );
    assert.equal(await balance(t.db, w.id), 500);
    await zeroSum();
  });

  test("200 concurrent debits never take a prepaid wallet below 0: exactly the affordable ones succeed", async () => {
    const payer = await account();
    const payee = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("concurrent usage overdrafts all land, the wallet goes overdue, and a top-up clears it", async () => {
    const w = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("postpaid and suite wallets have no floor; system wallet balances are the sum of their entries", async () => {
    const partner = await walletFor(t.db, { kind: "partner", id: randomUUID() }, "USD");
    const suite = await walletFor(t.db, { kind: "account", id: randomUUID() }, "KRW", { policy: "suite" });
    const revUsd = await systemWallet(t.db, "revenue", "USD");
    const rev = await systemWallet(t.db, "revenue", "KRW");
    const revBefore = await balance(t.db, rev.id);
    await post(t.db, {
      currency: "USD",
      source: { type: "usage", id: "p" },
      idempotencyKey: randomUUID(),
      legs: [
        { walletId: partner.id, amount: -2_500_000 },
        { walletId: revUsd.id, amount: 2_500_000 },
      ],
    });
    await post(t.db, {
      currency: "KRW",
      source: { type: "usage", id: "s" },
      idempotencyKey: randomUUID(),
      legs: [
        { walletId: suite.id, amount: -999 },
        { walletId: rev.id, amount: 999 },
      ],
    });
    assert.equal(await balance(t.db, partner.id), -2_500_000);
    assert.equal(await balance(t.db, suite.id), -999);
    assert.equal(await balance(t.db, rev.id), revBefore + 999);
    assert.equal(await balance(t.db, rev.id), await sumOfEntries(t.db, rev.id));
    const overdue = (
      await t.db.query(
        "SELECT count(*)::int AS n FROM ledger_wallets WHERE id = ANY($1) AND overdue_since IS NOT NULL",
        [[partner.id, suite.id]],
      )
    ).rows[0].n;
    assert.equal(overdue, 0, "postpaid debt is not overdue");
  });

  test("postMany is all-or-nothing and applies the floor in order", async () => {
    const a = await account();
    const b = await account();
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
    await cacheMatches();
  });

  test("random concurrent traffic over many wallets keeps every invariant", async () => {
    const ws = await Promise.all(Array.from({ length: 8 }, () => account()));
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
    await zeroSum();
    await cacheMatches();
    // non-overdraft debits never crossed 0: any negative balance_after comes from a usage entry
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id
        WHERE e.wallet_id = ANY($1) AND e.amount < 0 AND e.balance_after < 0 AND x.source_type <> 'usage'`,
      [ws.map((w) => w.id)],
    );
    assert.equal(rows[0].n, 0);
  });
  const settledWithin = async (p: Promise<unknown>, ms: number) => {
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

  test("posts in callers' own transactions: 30 concurrent first posts with one key make one transaction, the others wait and replay", async () => {
    const w = await account();
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const input = topup(w, 700, clearing);
    const results = await Promise.all(Array.from({ length: 30 }, () => inTransaction(wide, (tx) => post(tx, input))));
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.transaction.id)).size, 1);
    for (const r of results) assert.deepEqual(r.transaction.entries.map((e) => e.amount).sort(), [-700, 700]);
    assert.equal(await balance(t.db, w.id), 700);
    await zeroSum();
    await cacheMatches();
  });

  test("a post waits for a concurrent first post of its key in flight and replays it (user wallets, system wallets only)", async () => {
    const w = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("other content under a key in flight is a conflict; refusals leave the caller's transaction usable", async () => {
    const w = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("postMany racing a first post of one of its keys: a replay between system wallets, or a conflict that writes nothing", async () => {
    const w = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("concurrent post(pool) calls stand alone: a key twice in one burst, refusals beside successes", async () => {
    const w = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("a coalesced posting that fails as a whole (not a refusal) fails alone", async () => {
    const w = await account();
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
    await zeroSum();
    await cacheMatches();
  });

  test("postMany with many postings sharing wallets: one statement, in order, replayable as a whole", async () => {
    const ws = await Promise.all(Array.from({ length: 5 }, () => account()));
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
    await zeroSum();
    await cacheMatches();
  });
});
