/**
 * Ledger tests (src/billing/ledger/): wallet creation and policies, idempotency by key, the refusals that write
 * nothing, and the append-only triggers.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createTestApp, signup, type TestApp } from "../helpers/app.js";
import { createPool, type Db } from "../../src/store/db.js";
import { LedgerError, balance, post, sumOfEntries, systemWallet, walletFor } from "../../src/billing/ledger/ledger.js";
import { account, cacheMatches, topup, zeroSum } from "./ledger-helpers.js";

describe("ledger: wallets, idempotent posts, refusals, append-only", () => {
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
    const w = await account(t);
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
    await zeroSum(t.db);
    await cacheMatches(t.db);
  });

  test("unbalanced, fractional, zero, unknown-wallet and cross-currency posts are refused and write nothing", async () => {
    const w = await account(t);
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
    const w = await account(t);
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
    await zeroSum(t.db);
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
});
