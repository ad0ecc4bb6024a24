import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { spawn } from "node:child_process";
import path from "node:path";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { createPool, type Db } from "../../src/store/db.js";
import { balance, post, systemWallet, walletFor } from "../../src/billing/ledger/ledger.js";
import { intervalStartOf, meterInterval, meterNow } from "../../src/billing/metering/meter.js";
import { loadPriceCatalog, prices } from "../../src/billing/catalog.js";
import type { MeteringSource } from "../../src/kernel/area.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const STEP = prices().meter_interval_seconds * 1000;
// basic: 36 KRW/h -> 3 won per 5 minutes; storage 0.18 KRW/GB-h -> 50 GB = 0.75 won per 5 minutes.
// The meter is global: each run meters every database of this file's database, so tests check their own accounts.

/** A database row as the databases area keeps it (no server: the meter only reads the table). */
async function fakeDatabase(
  q: Db,
  accountId: string,
  o: { size?: string; storage_gb?: number; state?: string; created_at?: Date } = {},
): Promise<string> {
  const id = randomUUID();
  const slug = `m${id.replace(/-/g, "").slice(0, 20)}`;
  await q.query(
    `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, db_name, db_user, created_at)
     VALUES ($1, $2, 'account', $2, $3, $3, 17, $4, $5, 7, 'running', $6, $3, $3, $7)`,
    [id, accountId, slug, o.size ?? "basic", o.storage_gb ?? 50, o.state ?? "running", o.created_at ?? new Date(0)],
  );
  return id;
}

describe("metering", () => {
  let t: TestApp;
  let wide: Db;
  let sources: readonly MeteringSource[];
  before(async () => {
    t = await createTestApp();
    wide = createPool(t.url, 30);
    sources = t.platform.kernel.metering;
  });
  after(async () => {
    await wide.end();
    await t.close();
  });

  /** charged won * 1e6 + carried micro-won = micro-won of the records, per wallet */
  const nothingLost = async (accountIds: string[]) => {
    for (const id of accountIds) {
      const { rows } = await t.db.query<{ records: number; charged: number; carry: number }>(
        `SELECT (SELECT coalesce(sum(instance_micro + storage_micro), 0) FROM usage_records WHERE account_id = $1::uuid)::bigint AS records,
                (SELECT coalesce(-sum(e.amount), 0) FROM ledger_entries e JOIN ledger_transactions x ON x.id = e.transaction_id
                   WHERE e.wallet_id = w.id AND x.source_type = 'usage')::bigint AS charged,
                coalesce((SELECT micro FROM usage_carry WHERE wallet_id = w.id), 0)::bigint AS carry
           FROM ledger_wallets w WHERE w.owner_kind = 'account' AND w.owner_id = $1::text AND w.currency = 'KRW'`,
        [id],
      );
      assert.ok(rows[0], `account ${id} has a wallet`);
      assert.equal(
        rows[0].charged * 1_000_000 + rows[0].carry,
        rows[0].records,
        `account ${id}: charged + carry = usage`,
      );
    }
  };
  const recordsPer = async (interval: Date, ids: string[]) => {
    const { rows } = await t.db.query<{ resource_id: string; n: number }>(
      "SELECT resource_id, count(*)::int AS n FROM usage_records WHERE interval_start = $1 AND resource_id = ANY($2) GROUP BY 1",
      [interval, ids],
    );
    return new Map(rows.map((r) => [r.resource_id, r.n]));
  };
  const zeroSum = async () => {
    const { rows } = await t.db.query<{ sum: number }>(
      "SELECT coalesce(sum(amount), 0)::bigint AS sum FROM ledger_entries WHERE currency = 'KRW'",
    );
    assert.equal(rows[0].sum, 0);
  };
  const accounts = async (n: number) => Promise.all(Array.from({ length: n }, async () => (await signup(t.app)).id));
  let nextInterval = intervalStartOf(new Date()).getTime() - 1000 * STEP;
  /** an interval no other test in this file uses */
  const freshInterval = () => new Date((nextInterval -= STEP));

  test("the catalog refuses prices that aren't whole micro-won per interval", async () => {
    const { writeFile, mkdtemp } = await import("node:fs/promises");
    const dir = await mkdtemp(path.join(ROOT, ".test-data", "prices-"));
    const file = path.join(dir, "prices.json");
    await writeFile(
      file,
      JSON.stringify({
        currency: "KRW",
        meter_interval_seconds: 300,
        resources: { database: { sizes: { basic: { krw_per_hour: 1, storage_microkrw_per_gb_hour: 0 } } } },
      }),
    );
    assert.throws(() => loadPriceCatalog(file), /not a whole number of micro-won/);
    await writeFile(
      file,
      JSON.stringify({ currency: "KRW", meter_interval_seconds: 420, resources: { database: { sizes: {} } } }),
    );
    assert.throws(() => loadPriceCatalog(file), /divide an hour/);
    await writeFile(
      file,
      JSON.stringify({
        currency: "KRW",
        meter_interval_seconds: 300,
        resources: { database: { sizes: { basic: { krw_per_hour: 1.5, storage_microkrw_per_gb_hour: 0 } } } },
      }),
    );
    assert.throws(() => loadPriceCatalog(file), /invalid/);
  });

  test("four concurrent meters of one interval record and charge every resource once", async () => {
    const accs = await accounts(10);
    const dbs: string[] = [];
    for (const a of accs) for (let i = 0; i < 6; i++) dbs.push(await fakeDatabase(t.db, a));
    const interval = freshInterval();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => meterInterval(wide, sources, interval, { batchSize: 7 })),
    );
    const inInterval = (
      await t.db.query("SELECT count(*)::int AS n FROM usage_records WHERE interval_start = $1", [interval])
    ).rows[0].n;
    assert.ok(inInterval >= 60);
    assert.equal(
      results.reduce((s, r) => s + r.records, 0),
      inInterval,
      "the meters split the records between them",
    );
    const per = await recordsPer(interval, dbs);
    assert.equal(per.size, 60);
    for (const n of per.values()) assert.equal(n, 1);
    // 6 x 3.75 won = 22.5 won per account: 22 charged, 0.5 carried
    for (const a of accs)
      assert.equal(await balance(t.db, (await walletFor(t.db, { kind: "account", id: a }, "KRW")).id), -22);
    const again = await meterInterval(t.db, sources, interval);
    assert.equal(again.records, 0);
    assert.equal(again.charged_krw, 0);
    await nothingLost(accs);
    await zeroSum();
  });

  test("sub-won remainders carry over: four intervals of 3.75 won charge exactly 15 won", async () => {
    const [a] = await accounts(1);
    await fakeDatabase(t.db, a);
    const charged: number[] = [];
    for (let i = 0; i < 4; i++) charged.push((await meterInterval(t.db, sources, freshInterval())).charged_krw);
    const w = await walletFor(t.db, { kind: "account", id: a }, "KRW");
    assert.equal(await balance(t.db, w.id), -15);
    const carry = (await t.db.query("SELECT micro FROM usage_carry WHERE wallet_id = $1", [w.id])).rows[0].micro;
    assert.equal(carry, 0);
    await nothingLost([a]);
  });

  test("paused databases pay storage only, dev databases nothing, removed and creating ones are not metered", async () => {
    const [a] = await accounts(1);
    const paused = await fakeDatabase(t.db, a, { state: "paused" });
    const dev = await fakeDatabase(t.db, a, { size: "dev", storage_gb: 10 });
    const removed = await fakeDatabase(t.db, a, { state: "removed" });
    const creating = await fakeDatabase(t.db, a, { state: "creating" });
    const future = await fakeDatabase(t.db, a, { created_at: new Date(Date.now() + 3600_000) });
    const interval = freshInterval();
    await meterInterval(t.db, sources, interval);
    const { rows } = await t.db.query<{ resource_id: string; instance_micro: number; storage_micro: number }>(
      "SELECT resource_id, instance_micro, storage_micro FROM usage_records WHERE account_id = $1",
      [a],
    );
    const by = new Map(rows.map((r) => [r.resource_id, r]));
    assert.deepEqual(
      { ...by.get(paused)!, resource_id: undefined },
      { resource_id: undefined, instance_micro: 0, storage_micro: 750_000 },
    );
    assert.equal(by.get(dev)!.instance_micro + by.get(dev)!.storage_micro, 0);
    assert.ok(!by.has(removed) && !by.has(creating) && !by.has(future));
    const w = await walletFor(t.db, { kind: "account", id: a }, "KRW");
    assert.equal(await balance(t.db, w.id), 0, "0.75 won stays in the carry");
    await nothingLost([a]);
  });

  test("a crash inside a batch rolls the batch back; the rerun charges every interval once", async () => {
    const accs = await accounts(3);
    const dbs: string[] = [];
    for (const a of accs) for (let i = 0; i < 5; i++) dbs.push(await fakeDatabase(t.db, a));
    const interval = freshInterval();
    await assert.rejects(
      meterInterval(t.db, sources, interval, {
        batchSize: 4,
        afterBatchWrite: (b) => {
          if (b === 2) throw new Error("crash");
        },
      }),
      /crash/,
    );
    const committed = (
      await t.db.query("SELECT count(*)::int AS n FROM usage_records WHERE interval_start = $1", [interval])
    ).rows[0].n;
    assert.equal(committed, 8, "two batches committed, the third rolled back");
    await meterInterval(t.db, sources, interval, { batchSize: 4 });
    const per = await recordsPer(interval, dbs);
    assert.equal(per.size, 15);
    for (const n of per.values()) assert.equal(n, 1);
    // 5 x 3.75 = 18.75 won per account
    for (const a of accs)
      assert.equal(await balance(t.db, (await walletFor(t.db, { kind: "account", id: a }, "KRW")).id), -18);
    await nothingLost(accs);
    await zeroSum();
  });

  test("kill -9 of a metering process mid-transaction, beside a second meter, then a restart: every interval charged once", async () => {
    const accs = await accounts(4);
    const dbs: string[] = [];
    for (const a of accs) for (let i = 0; i < 10; i++) dbs.push(await fakeDatabase(t.db, a));
    const intervals = [freshInterval(), freshInterval(), freshInterval()];
    const meterModule = path.join(ROOT, "src/billing/metering/meter.ts");
    const dbModule = path.join(ROOT, "src/store/db.ts");
    const sourceModule = path.join(ROOT, "src/databases/metering.ts");
    // a worker that meters the three intervals and kills itself (SIGKILL) inside the transaction of its 4th batch
    const code = `
      import { meterInterval } from ${JSON.stringify(meterModule)};
      import { createPool } from ${JSON.stringify(dbModule)};
      import { databaseMetering } from ${JSON.stringify(sourceModule)};
      const db = createPool(process.env.DB_URL, 2);
      let n = 0;
      for (const i of ${JSON.stringify(intervals.map((i) => i.toISOString()))}) {
        await meterInterval(db, [databaseMetering()], new Date(i), { batchSize: 6, afterBatchWrite: async () => {
          if (++n === Number(process.env.KILL_AT)) { process.stdout.write("dying\\n"); process.kill(process.pid, "SIGKILL"); await new Promise(() => {}); }
        } });
      }
      await db.end();`;
    const run = (killAt: number) =>
      new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
          cwd: ROOT,
          env: { ...process.env, DB_URL: t.url, KILL_AT: String(killAt) },
        });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("exit", (c, signal) => resolve({ code: c, signal, out }));
      });
    const [killed, other] = await Promise.all([run(4), run(9)]);
    assert.equal(killed.signal, "SIGKILL", killed.out);
    assert.equal(other.signal, "SIGKILL", other.out);
    // the restart: a meter runs every interval again
    for (const i of intervals) await meterInterval(t.db, sources, i, { batchSize: 6 });
    for (const i of intervals) {
      const per = await recordsPer(i, dbs);
      assert.equal(per.size, 40, `interval ${i.toISOString()}: every resource recorded`);
      for (const n of per.values()) assert.equal(n, 1);
    }
    // 3 intervals x 10 databases x 3.75 won = 112.5 won per account
    for (const a of accs)
      assert.equal(await balance(t.db, (await walletFor(t.db, { kind: "account", id: a }, "KRW")).id), -112);
    await nothingLost(accs);
    await zeroSum();
  });

  test("the periodic job meters the current interval once however often it runs", async () => {
    const [a] = await accounts(1);
    const id = await fakeDatabase(t.db, a);
    await Promise.all([meterNow(wide, sources), meterNow(wide, sources), meterNow(wide, sources)]);
    const { rows } = await t.db.query("SELECT interval_start FROM usage_records WHERE resource_id = $1", [id]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].interval_start.getTime(), intervalStartOf(new Date()).getTime());
  });

  test("usage beyond the balance makes the account overdue; paid creation is 402, dev still 201, a top-up lifts it", async () => {
    const u = await signup(t.app);
    const create = (size: string, name: string) =>
      call(t.app, { method: "POST", url: "/v1/databases", token: u.token, body: { name, size } });
    expectError(await create("basic", `p${Date.now()}`), 402, "insufficient_funds");
    expectError(await create("business", `q${Date.now()}`), 402, "insufficient_funds");
    const w = await walletFor(t.db, { kind: "account", id: u.id }, "KRW");
    const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
    await post(t.db, {
      currency: "KRW",
      source: { type: "topup", id: "x" },
      idempotencyKey: randomUUID(),
      legs: [
        { walletId: w.id, amount: 5 },
        { walletId: clearing.id, amount: -5 },
      ],
    });
    await fakeDatabase(t.db, u.id);
    await fakeDatabase(t.db, u.id);
    await meterInterval(t.db, sources, freshInterval());
    assert.equal(await balance(t.db, w.id), 5 - 7, "usage is charged even beyond the balance");
    let bal = (await call(t.app, { url: "/v1/billing/balance", token: u.token })).json();
    assert.equal(bal.overdue, true);
    assert.ok(bal.overdue_since);
    expectError(await create("basic", `r${Date.now()}`), 402, "insufficient_funds");
    const dev = await create("dev", `d${Date.now()}`);
    assert.equal(dev.statusCode, 201, dev.body);
    await post(t.db, {
      currency: "KRW",
      source: { type: "topup", id: "y" },
      idempotencyKey: randomUUID(),
      legs: [
        { walletId: w.id, amount: 1000 },
        { walletId: clearing.id, amount: -1000 },
      ],
    });
    bal = (await call(t.app, { url: "/v1/billing/balance", token: u.token })).json();
    assert.equal(bal.overdue, false);
    assert.equal(bal.balance, 998);
    const paid = await create("basic", `b${Date.now()}`);
    assert.equal(paid.statusCode, 201, paid.body);
  });
});
