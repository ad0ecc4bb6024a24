import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { post, setWalletPolicy, systemWallet, walletFor } from "../../src/billing/ledger/ledger.js";
import { meterInterval } from "../../src/billing/metering/meter.js";
import { prices } from "../../src/billing/catalog.js";
import { monthBounds } from "../../src/billing/metering/reports.js";
import type { Db } from "../../src/store/db.js";
import type { MeteringSource } from "../../src/kernel/area.js";

const STEP = prices().meter_interval_seconds * 1000;

/** A database row as the databases area keeps it (no server: the meter and the reports only read the table). */
async function fakeDatabase(
  q: Db,
  accountId: string,
  o: { size?: string; storage_gb?: number; state?: string } = {},
): Promise<string> {
  const id = randomUUID();
  const slug = `m${id.replace(/-/g, "").slice(0, 20)}`;
  await q.query(
    `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, db_name, db_user, created_at)
     VALUES ($1, $2, 'account', $2, $3, $3, 17, $4, $5, 7, 'running', $6, $3, $3, 'epoch')`,
    [id, accountId, slug, o.size ?? "basic", o.storage_gb ?? 50, o.state ?? "running"],
  );
  return id;
}

describe("billing read endpoints", () => {
  let t: TestApp;
  let sources: readonly MeteringSource[];
  before(async () => {
    t = await createTestApp();
    sources = t.platform.kernel.metering;
  });
  after(async () => {
    await t.close();
  });

  const get = (token: string, url: string) => call(t.app, { url, token });
  const topup = async (accountId: string, amount: number) => {
    const w = await walletFor(t.db, { kind: "account", id: accountId }, "KRW");
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    const key = `topup:${randomUUID()}`;
    return post(t.db, {
      currency: "KRW",
      source: { type: "topup", id: key },
      idempotencyKey: key,
      legs: [
        { walletId: w.id, amount },
        { walletId: clearing.id, amount: -amount },
      ],
    });
  };

  test("every endpoint needs a token and billing:read; a billing:read key is enough", async () => {
    const u = await signup(t.app);
    const good = await scopedKey(t.app, u.token, ["billing:read"]);
    const bad = await scopedKey(t.app, u.token, ["databases:read"]);
    for (const url of [
      "/v1/billing/balance",
      "/v1/billing/transactions",
      "/v1/billing/usage-daily",
      "/v1/bill/summary",
    ]) {
      expectError(await call(t.app, { url }), 401, "auth_required");
      expectError(await get(bad, url), 403, "scope_insufficient");
      assert.equal((await get(good, url)).statusCode, 200, url);
      assert.equal((await get(u.token, url)).statusCode, 200, url);
    }
  });

  test("GET /v1/billing/balance: balance, burn rate of what runs, hours left, suite_billed", async () => {
    const u = await signup(t.app);
    let b = (await get(u.token, "/v1/billing/balance")).json();
    assert.deepEqual(
      {
        balance: b.balance,
        burn: b.burn_rate_krw_per_hour,
        hours: b.hours_left,
        suite: b.suite_billed,
        overdue: b.overdue,
      },
      { balance: 0, burn: 0, hours: null, suite: false, overdue: false },
    );
    await topup(u.id, 1000);
    await fakeDatabase(t.db, u.id); // basic 50 GB running: 36 + 9 KRW/h
    await fakeDatabase(t.db, u.id, { state: "paused", storage_gb: 10 }); // storage only: 1.8 KRW/h
    await fakeDatabase(t.db, u.id, { state: "removed" });
    b = (await get(u.token, "/v1/billing/balance")).json();
    assert.equal(b.balance, 1000);
    assert.equal(b.burn_rate_microkrw_per_hour, 46_800_000);
    assert.equal(b.burn_rate_krw_per_hour, 47);
    assert.equal(b.hours_left, 21); // 1000 / 46.8
    assert.deepEqual(b.balances, [{ currency: "KRW", balance: 1000 }]);

    const s = await signup(t.app);
    await setWalletPolicy(t.db, (await walletFor(t.db, { kind: "account", id: s.id }, "KRW")).id, "suite");
    b = (await get(s.token, "/v1/billing/balance")).json();
    assert.equal(b.suite_billed, true);
    assert.equal(b.billing_policy, "suite");
    // suite-billed accounts deploy at zero balance
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: s.token,
      body: { name: `s${Date.now()}`, size: "basic" },
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  test("GET /v1/billing/transactions: newest first, cursor pages without gaps or repeats, filters by type and time", async () => {
    const u = await signup(t.app);
    const other = await signup(t.app);
    await topup(other.id, 7);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await topup(u.id, 100 + i)).transaction.id);
    await fakeDatabase(t.db, u.id);
    const interval = new Date(Math.floor(Date.now() / STEP) * STEP - 5000 * STEP);
    await meterInterval(t.db, sources, interval);
    await meterInterval(t.db, sources, new Date(interval.getTime() + STEP)); // 3.75 + 3.75: usage of 3 then 4 won

    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(u.token, `/v1/billing/transactions?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.ok(body.items.length <= 3);
      seen.push(...body.items);
      cursor = body.next_cursor;
    } while (cursor);
    assert.equal(seen.length, 9);
    assert.equal(new Set(seen.map((x) => x.id)).size, 9);
    assert.deepEqual(
      seen
        .slice(2)
        .map((x) => x.id)
        .reverse(),
      made,
    );
    assert.deepEqual(
      seen.slice(0, 2).map((x) => [x.type, x.amount]),
      [
        ["usage", -4],
        ["usage", -3],
      ],
    );
    assert.equal(seen[0].balance_after, 721 - 7);
    assert.equal(seen[2].amount, 106);
    assert.equal(seen[2].currency, "KRW");

    const usage = (await get(u.token, "/v1/billing/transactions?type=usage")).json();
    assert.deepEqual(
      usage.items.map((x: any) => x.type),
      ["usage", "usage"],
    );
    const topups = (await get(u.token, "/v1/billing/transactions?type=topup&limit=200")).json();
    assert.equal(topups.items.length, 7);
    assert.equal(topups.next_cursor, null);
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.equal(
      (await get(u.token, `/v1/billing/transactions?from=${encodeURIComponent(future)}`)).json().items.length,
      0,
    );
    assert.equal(
      (await get(u.token, `/v1/billing/transactions?to=${encodeURIComponent(future)}`)).json().items.length,
      9,
    );
    assert.equal((await get(u.token, "/v1/billing/transactions?currency=USD")).json().items.length, 0);
    // the other account sees only its own
    assert.equal((await get(other.token, "/v1/billing/transactions")).json().items.length, 1);
    expectError(await get(u.token, "/v1/billing/transactions?cursor=abc"), 400);
    expectError(await get(u.token, "/v1/billing/transactions?type=gift"), 400);
    expectError(await get(u.token, "/v1/billing/transactions?from=yesterday"), 400);
  });

  test("GET /v1/billing/usage-daily: per UTC day and kind with totals; range checks", async () => {
    const u = await signup(t.app);
    await fakeDatabase(t.db, u.id);
    await fakeDatabase(t.db, u.id, { state: "paused" });
    const day1 = new Date(Date.UTC(2026, 0, 10, 23, 55)); // last interval of Jan 10
    await meterInterval(t.db, sources, day1);
    await meterInterval(t.db, sources, new Date(day1.getTime() + STEP)); // first of Jan 11
    await meterInterval(t.db, sources, new Date(day1.getTime() + 2 * STEP));
    const res = await get(u.token, "/v1/billing/usage-daily?from=2026-01-09&to=2026-01-11");
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.from, "2026-01-09");
    assert.equal(body.to, "2026-01-11");
    assert.deepEqual(
      body.days.map((d: any) => d.date),
      ["2026-01-10", "2026-01-11"],
    );
    // running: 3 + 0.75 won, paused: 0.75 won per interval
    assert.deepEqual(body.days[0].kinds, [
      {
        kind: "database",
        instance_microkrw: 3_000_000,
        storage_microkrw: 1_500_000,
        amount_microkrw: 4_500_000,
        amount_krw: 4,
      },
    ]);
    assert.equal(body.days[1].total_microkrw, 9_000_000);
    assert.equal(body.total_microkrw, 13_500_000);
    assert.equal(body.total_krw, 13);
    assert.equal(
      (await get(u.token, "/v1/billing/usage-daily?from=2026-01-11&to=2026-01-11")).json().total_microkrw,
      9_000_000,
    );
    assert.equal((await get(u.token, "/v1/billing/usage-daily")).json().days.length, 0, "default: the last 30 days");
    expectError(await get(u.token, "/v1/billing/usage-daily?from=2026-02-30"), 400);
    expectError(await get(u.token, "/v1/billing/usage-daily?from=2026-01-12&to=2026-01-11"), 400);
    expectError(await get(u.token, "/v1/billing/usage-daily?from=2024-01-01&to=2026-01-11"), 400);
    expectError(await get(u.token, "/v1/billing/usage-daily?from=10-01-2026"), 400);
  });

  test("GET /v1/bill/summary: month to date by kind, projection, spend caps against this month's use", async () => {
    const u = await signup(t.app);
    await topup(u.id, 50);
    const db1 = await fakeDatabase(t.db, u.id);
    const { start } = monthBounds(new Date());
    for (let i = 0; i < 4; i++) await meterInterval(t.db, sources, new Date(start.getTime() + i * STEP));
    await meterInterval(t.db, sources, new Date(start.getTime() - STEP)); // last month: not in the summary
    let s = (await get(u.token, "/v1/bill/summary")).json();
    assert.equal(s.period, start.toISOString().slice(0, 7));
    assert.deepEqual(
      s.month_to_date.kinds.map((k: any) => [k.kind, k.amount_microkrw]),
      [["database", 15_000_000]],
    );
    assert.equal(s.month_to_date.total_krw, 15);
    assert.equal(s.projected_month.burn_rate_microkrw_per_hour, 45_000_000);
    const hoursLeft = (Date.parse(s.period_end) - Date.now()) / 3_600_000;
    assert.ok(
      Math.abs(s.projected_month.total_microkrw - (15_000_000 + 45_000_000 * hoursLeft)) < 45_000_000 / 60,
      "mtd + burn x hours left",
    );
    assert.equal(s.balance, 50 - 15 - 3);
    assert.equal(s.spend_caps.account.is_default, true);
    assert.equal(s.spend_caps.account.cap_krw, t.config.defaultAccountSpendCapKrw);
    assert.equal(s.spend_caps.account.used_krw, 15);
    assert.deepEqual(
      s.spend_caps.app.apps.map((a: any) => [a.id, a.used_krw]),
      [[db1, 15]],
    );

    assert.equal(
      (await call(t.app, { method: "PUT", url: "/v1/me/account-spend-cap", token: u.token, body: { amount_krw: 10 } }))
        .statusCode,
      200,
    );
    assert.equal(
      (await call(t.app, { method: "PUT", url: "/v1/me/app-spend-cap", token: u.token, body: { amount_krw: 20 } }))
        .statusCode,
      200,
    );
    s = (await get(u.token, "/v1/bill/summary")).json();
    assert.deepEqual(s.spend_caps.account, {
      cap_krw: 10,
      is_default: false,
      used_krw: 15,
      remaining_krw: 0,
      reached: true,
    });
    assert.equal(s.spend_caps.app.cap_krw, 20);
    assert.deepEqual(s.spend_caps.app.apps[0].reached, false);
    assert.equal(s.spend_caps.app.apps[0].remaining_krw, 5);
  });
});
