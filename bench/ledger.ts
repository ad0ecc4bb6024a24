/**
 * `npm run bench:ledger`: the ledger and the meter against a plain PostgreSQL baseline, in one run on
 * one embedded control store (or DATABASE_URL):
 *  - postings/s of post() (one balanced 2-leg transaction: account wallet -> platform:revenue) for a
 *    single hot wallet and spread over 1,000 wallets, at concurrency 1 and BENCH_CONCURRENCY (16);
 *  - beside it, a plain autocommit `UPDATE counters SET n = n + 1 WHERE id = $1` loop, same shapes;
 *  - the time to meter one hour (12 intervals of 5 minutes) for 10,000 running databases, beside a
 *    plain INSERT of the same number of rows into an unconstrained table.
 *  - the time of one postMany() of 1,000 postings (one per wallet, to platform:revenue): the set-based
 *    path metering uses.
 * Beside each figure: the one the last round printed (before posting became one SQL function call).
 * Options: BENCH_SECONDS per throughput figure (default 5), BENCH_CONCURRENCY (default 16), BENCH_RESOURCES (10000).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, chmod } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createPool, type Db } from "../src/store/db.js";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { migrate } from "../src/store/migrate.js";
import { ensureTraversable } from "../src/pgserver/cluster.js";
import { postgresRunAs } from "../src/pgserver/system-user.js";
import { post, postMany, systemWallet, walletFor, type PostInput, type Wallet } from "../src/billing/ledger/ledger.js";
import { meterInterval } from "../src/billing/metering/meter.js";
import { prices } from "../src/billing/catalog.js";
// the databases table as the databases area's metering source reports it (the bench has no platform)
import { databaseMetering } from "../src/databases/metering.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RESOURCES = Number(process.env.BENCH_RESOURCES ?? 10_000);
const WALLETS = 1000;
/** what the last round printed (298/s, 271/s, 607/s; 11.16 s), keyed by "target|concurrency" */
const LAST_ROUND: Record<string, number> = {
  "1 hot wallet / 1 row|1": 298,
  "1 hot wallet / 1 row|16": 271,
  "1,000 wallets / 1,000 rows|16": 607,
};
const LAST_ROUND_METER_S = 11.16;
const log = (m: string) => process.stderr.write(`${m}\n`);

let root: string | null = null;
let stopServer = async () => {};
let url = process.env.DATABASE_URL;
if (!url) {
  root = await mkdtemp(path.join(os.tmpdir(), "bench-ledger-"));
  await chmod(root, 0o755);
  await ensureTraversable(root, postgresRunAs());
  const server = await startEmbeddedServer(root, "platform");
  url = server.url;
  stopServer = server.stop;
}
const db: Db = createPool(url, CONC + 4);
await migrate(db);

/** runs fn in `conc` loops for SECONDS; returns operations per second */
async function throughput(conc: number, fn: (worker: number, i: number) => Promise<unknown>): Promise<number> {
  const end = performance.now() + SECONDS * 1000;
  let ops = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await fn(w, i);
        ops++;
      }
    }),
  );
  return ops / ((performance.now() - t0) / 1000);
}

// ------------------------------------------------------------------ set-up
log("set-up: 1,000 accounts with funded wallets ...");
const accountIds = Array.from({ length: WALLETS }, () => randomUUID());
await db.query("INSERT INTO accounts (id, email) SELECT a, a::text || '@bench.invalid' FROM unnest($1::uuid[]) AS a", [
  accountIds,
]);
const wallets: Wallet[] = [];
for (const id of accountIds) wallets.push(await walletFor(db, { kind: "account", id }, "KRW"));
const revenue = await systemWallet(db, "revenue", "KRW");
const clearing = await systemWallet(db, "payments-clearing", "KRW");
for (const w of wallets) {
  await post(db, {
    currency: "KRW",
    source: { type: "topup", id: w.id },
    idempotencyKey: `seed:${w.id}`,
    legs: [
      { walletId: w.id, amount: 1_000_000_000 },
      { walletId: clearing.id, amount: -1_000_000_000 },
    ],
  });
}
await db.query("CREATE TABLE IF NOT EXISTS bench_counters (id int PRIMARY KEY, n bigint NOT NULL)");
await db.query("INSERT INTO bench_counters SELECT g, 0 FROM generate_series(1, $1) g ON CONFLICT DO NOTHING", [
  WALLETS,
]);

let seq = 0;
const charge = (w: Wallet) => {
  const key = `bench:${seq++}:${randomUUID()}`;
  return post(db, {
    currency: "KRW",
    source: { type: "usage", id: key },
    idempotencyKey: key,
    legs: [
      { walletId: w.id, amount: -1 },
      { walletId: revenue.id, amount: 1 },
    ],
  });
};
const update = (id: number) => db.query("UPDATE bench_counters SET n = n + 1 WHERE id = $1", [id]);

// ------------------------------------------------------------------ throughput
const rows: [string, number, number, number][] = [];
for (const conc of [1, CONC]) {
  log(`throughput at concurrency ${conc} ...`);
  const hotUpdate = await throughput(conc, () => update(1));
  const hotPost = await throughput(conc, () => charge(wallets[0]));
  rows.push(["1 hot wallet / 1 row", conc, hotPost, hotUpdate]);
  const spreadUpdate = await throughput(conc, (w, i) => update(1 + ((w * 7919 + i * 104729) % WALLETS)));
  const spreadPost = await throughput(conc, (w, i) => charge(wallets[(w * 7919 + i * 104729) % WALLETS]));
  rows.push(["1,000 wallets / 1,000 rows", conc, spreadPost, spreadUpdate]);
}

// ------------------------------------------------------------------ postMany
log("postMany: 1,000 postings in one call ...");
const batchRuns: number[] = [];
for (let r = 0; r < 5; r++) {
  const inputs: PostInput[] = wallets.map((w) => {
    const key = `bench:many:${seq++}:${randomUUID()}`;
    return {
      currency: "KRW",
      source: { type: "usage", id: key },
      idempotencyKey: key,
      legs: [
        { walletId: w.id, amount: -1 },
        { walletId: revenue.id, amount: 1 },
      ],
    };
  });
  const b0 = performance.now();
  await postMany(db, inputs);
  batchRuns.push(performance.now() - b0);
}
const batchMs = batchRuns.sort((a, b) => a - b)[Math.floor(batchRuns.length / 2)];

// the books still balance after all that
const sums = await db.query<{ sum: number }>("SELECT coalesce(sum(amount), 0)::bigint AS sum FROM ledger_entries");
const cache = await db.query<{ n: number }>(
  "SELECT count(*)::int AS n FROM ledger_wallets w WHERE w.balance IS NOT NULL AND w.balance <> (SELECT coalesce(sum(amount), 0) FROM ledger_entries e WHERE e.wallet_id = w.id)",
);

// ------------------------------------------------------------------ metering
log(`metering: ${RESOURCES} running databases over the 1,000 accounts ...`);
await db.query(
  `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, db_name, db_user, created_at)
   SELECT gen_random_uuid(), ($1::uuid[])[1 + g % $2], 'account', ($1::uuid[])[1 + g % $2], 'b' || g, 'bench-' || g, 17, (ARRAY['basic','pro','business','dev'])[1 + g % 4], 50, 7, 'running', 'running', 'b', 'b', 'epoch'
     FROM generate_series(1, $3) g`,
  [accountIds, WALLETS, RESOURCES],
);
const step = prices().meter_interval_seconds;
const perHour = 3600 / step;
const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 24 * 3_600_000);
const m0 = performance.now();
let records = 0;
let transactions = 0;
for (let i = 0; i < perHour; i++) {
  const r = await meterInterval(db, [databaseMetering()], new Date(hour.getTime() + i * step * 1000));
  records += r.records;
  transactions += r.transactions;
}
const meterMs = performance.now() - m0;
const rerun0 = performance.now();
let rerunRecords = 0;
for (let i = 0; i < perHour; i++)
  rerunRecords += (await meterInterval(db, [databaseMetering()], new Date(hour.getTime() + i * step * 1000))).records;
const rerunMs = performance.now() - rerun0;

await db.query(
  "CREATE TABLE IF NOT EXISTS bench_plain_usage_logged (resource_id uuid, interval_start timestamptz, micro bigint)",
);
const p0 = performance.now();
for (let i = 0; i < perHour; i++) {
  await db.query("INSERT INTO bench_plain_usage_logged SELECT id, $1, 1 FROM databases", [
    new Date(hour.getTime() + i * step * 1000),
  ]);
}
const plainMs = performance.now() - p0;

// ------------------------------------------------------------------ report
const f = (n: number) => Math.round(n).toLocaleString("en-US");
const lines = [
  "",
  `ledger bench (${SECONDS} s per figure, PostgreSQL ${(await db.query("SHOW server_version")).rows[0].server_version}, fsync on)`,
  "",
  "| target | concurrency | post() transactions/s | last round | plain UPDATE/s | post / UPDATE |",
  "|---|---|---|---|---|---|",
  ...rows.map(
    ([name, c, p, u]) =>
      `| ${name} | ${c} | ${f(p)} | ${LAST_ROUND[`${name}|${c}`] === undefined ? "-" : `${f(LAST_ROUND[`${name}|${c}`])}`} | ${f(u)} | ${(p / u).toFixed(2)} |`,
  ),
  "",
  `postMany of ${f(WALLETS)} postings (one per wallet, to platform:revenue) in one call: ${f(batchMs)} ms, median of ${batchRuns.length} (${f(WALLETS / (batchMs / 1000))} postings/s)`,
  "",
  `after ${f(seq)} postings: sum of all entries = ${sums.rows[0].sum}; wallets whose cached balance differs from the sum of entries: ${cache.rows[0].n}`,
  "",
  `metering one hour (${perHour} intervals x ${f(RESOURCES)} running databases, ${WALLETS} accounts):`,
  `  meter: ${(meterMs / 1000).toFixed(2)} s, last round ${LAST_ROUND_METER_S.toFixed(2)} s  (${f(records)} usage records, ${f(transactions)} ledger transactions, ${f(records / (meterMs / 1000))} records/s)`,
  `  rerun of the same hour (all already metered): ${(rerunMs / 1000).toFixed(2)} s, ${rerunRecords} new records`,
  `  plain INSERT ... SELECT of the same ${f(perHour * RESOURCES)} rows (no constraints, no ledger): ${(plainMs / 1000).toFixed(2)} s`,
  "",
];
process.stdout.write(lines.join("\n"));
await db.end();
await stopServer();
if (root) await rm(root, { recursive: true, force: true });
