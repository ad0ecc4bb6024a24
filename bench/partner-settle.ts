/**
 * `npm run bench:partner` (second part): settling one 5-minute window for 10,000 postpaid partner children (target
 * under 5 s) on an embedded control store (or DATABASE_URL). Set-up, not timed: one postpaid partner, its children
 * with postpaid wallets, one GPU pod each metered by billing's meter in one window. Timed: settleWindow, the
 * transaction that writes 10,000 settlement rows and 10,000 ledger postings; then its sums are checked.
 * Options: BENCH_CHILDREN (default 10000).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, chmod } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createPool, type Db } from "../src/store/db.js";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { migrate } from "../src/store/migrate.js";
import { AREAS } from "../src/areas.js";
import { ensureTraversable } from "../src/pgserver/cluster.js";
import { postgresRunAs } from "../src/pgserver/system-user.js";
import { intervalStartOf, meterInterval } from "../src/billing/metering/meter.js";
import type { MeteredResource, MeteringSource } from "../src/kernel/contracts.js";
import { settleWindow } from "../src/partner/billing/settle.js";

const CHILDREN = Number(process.env.BENCH_CHILDREN ?? 10_000);
const TARGET_S = 5;
/** a gpu-h100 pod: 825 KRW per window */
const WINDOW_KRW = 825;
const log = (m: string) => process.stderr.write(`${m}\n`);

let root: string | null = null;
let stopServer = async () => {};
let url = process.env.DATABASE_URL;
if (!url) {
  root = await mkdtemp(path.join(os.tmpdir(), "bench-partner-settle-"));
  await chmod(root, 0o755);
  await ensureTraversable(root, postgresRunAs());
  const server = await startEmbeddedServer(root, "platform");
  url = server.url;
  stopServer = server.stop;
}
const db: Db = createPool(url, 4);
try {
  await migrate(db, AREAS);
  log(
    `set-up: a postpaid partner with ${CHILDREN.toLocaleString()} children, one GPU pod each metered in one window ...`,
  );
  const partner = randomUUID();
  await db.query("INSERT INTO accounts (id, email) VALUES ($1, $2)", [partner, `${partner}@bench.invalid`]);
  await db.query(
    "INSERT INTO partners (account_id, billing_mode, monthly_limit_krw) VALUES ($1, 'partner_postpaid', 1000000000)",
    [partner],
  );
  const children = Array.from({ length: CHILDREN }, () => randomUUID());
  await db.query(
    `INSERT INTO partner_children (id, partner_id, external_ref) SELECT c, $1, c::text FROM unnest($2::uuid[]) AS c`,
    [partner, children],
  );
  await db.query(
    `INSERT INTO ledger_wallets (id, owner_kind, owner_id, currency, policy, balance)
     SELECT gen_random_uuid(), 'partner_child', c, 'KRW', 'postpaid', 0 FROM unnest($1::uuid[]) AS c`,
    [children],
  );
  const rows: MeteredResource[] = children.map((id) => ({
    id: randomUUID(),
    owner: { kind: "partner_child", id },
    accountId: partner,
    kind: "pod",
    size: "gpu-h100",
    storageGb: 0,
    state: "running",
  }));
  // in ownerKey order, as sources page
  const pages = [...rows].sort((a, b) => `partner_child:${a.owner.id}`.localeCompare(`partner_child:${b.owner.id}`));
  const source: MeteringSource = {
    kind: "pod",
    billable: async (_q, page) => {
      const from = page.after ? pages.findIndex((r) => r.id === page.after![1]) + 1 : 0;
      return pages.slice(from, from + page.limit);
    },
    billableOf: async () => [],
  };
  const window = intervalStartOf(new Date(Date.now() - 3_600_000));
  const metered = await meterInterval(db, [source], window);
  log(`metered: ${metered.records} records, ${metered.charged_krw} KRW`);

  const t0 = performance.now();
  const result = await settleWindow(db, window);
  const seconds = (performance.now() - t0) / 1000;

  const check = await db.query<{ n: string; krw: string; balance: string }>(
    `SELECT (SELECT count(*) FROM partner_settlements WHERE window_start = $1) AS n,
            (SELECT sum(amount_krw) FROM partner_settlements WHERE window_start = $1) AS krw,
            (SELECT balance FROM ledger_wallets WHERE owner_kind = 'partner' AND owner_id = $2) AS balance`,
    [window, partner],
  );
  const c = check.rows[0];
  const ok =
    Number(c.n) === CHILDREN &&
    Number(c.krw) === CHILDREN * WINDOW_KRW &&
    Number(c.balance) === -CHILDREN * WINDOW_KRW &&
    result.children === CHILDREN;
  console.log(
    `settle one 5-minute window, ${CHILDREN.toLocaleString()} children: ${seconds.toFixed(2)} s ` +
      `(target < ${TARGET_S} s) — ${result.children} settlements, ${result.krw} KRW; sums ${ok ? "ok" : "WRONG"}`,
  );
  if (!ok) process.exitCode = 1;
} finally {
  await db.end();
  await stopServer();
  if (root) await rm(root, { recursive: true, force: true });
}
