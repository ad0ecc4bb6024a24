/**
 * `npm run bench:org-audit`: GET /v1/org/audit over an organization with 1,000,000 audit rows (BENCH_ROWS), beside
 * BENCH_NOISE (500,000) rows of other owners (accounts and another organization) interleaved in id order.
 *
 * The rows span a year, from 12 members with 12 actions (one rare: 0.1 %) over 6 resource kinds (every combination
 * of member, action and kind occurs), written with generate_series straight into the control store, then ANALYZEd.
 * Each scenario sends BENCH_REQUESTS (200) requests one after another through the whole HTTP pipeline (app.inject:
 * authentication, the role guard, validation, serialization), its parameter varied per request (another actor,
 * action, window or cursor), and prints p50/p99 latency, rows per answer, and the indexes of the plan PostgreSQL
 * chose for the last request's query (EXPLAIN ANALYZE of the repo's own SQL: src/audit/repo.ts, idBounds and
 * ownerAuditQuery) with that query's execution time.
 *
 * Scenarios: the first page without filters; by actor (id, then e-mail); by action (common, then rare); by resource
 * kind; a 1-day, a 30-day and a 300-day from/to window at random places in the year; actor + kind and action + kind
 * over 30 days; deep cursor pages (random places in the log, then pages followed by next_cursor from one).
 * Runs on its own embedded control store (or DATABASE_URL: an empty database it may fill).
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { buildApp } from "../src/app.js";
import { AREAS } from "../src/areas.js";
import { loadConfig } from "../src/config/config.js";
import { MemoryRateLimitStore } from "../src/http/rate-limit.js";
import { JobQueue } from "../src/jobs/queue.js";
import { createPlatform, stopPlatform } from "../src/kernel/platform.js";
import { loadSecretBox } from "../src/kernel/secrets.js";
import { ensureTraversable } from "../src/pgserver/cluster.js";
import { postgresRunAs } from "../src/pgserver/system-user.js";
import { createPool } from "../src/store/db.js";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { migrate } from "../src/store/migrate.js";
import { auditRead, idBounds, ownerAuditQuery, type OwnerAuditFilter } from "../src/audit/repo.js";
import { envNumber } from "./lib/measure.js";
import { pct, printTable } from "./lib/report.js";

const ROWS = Math.round(envNumber("BENCH_ROWS", 1_000_000, 1000));
const NOISE = Math.round(envNumber("BENCH_NOISE", 500_000, 0));
const REQUESTS = Math.round(envNumber("BENCH_REQUESTS", 200, 10));
const MEMBERS = 12;
const ACTIONS = [
  "createPod",
  "updatePod",
  "deletePod",
  "createStaticSite",
  "deployStaticSite",
  "createDatabase",
  "updateDatabase",
  "createBucket",
  "createBucketKey",
  "updateOrg",
  "createOrgApiKey",
];
const RARE_ACTION = "deleteOrgDepartment";
const KINDS = ["pods", "static", "databases", "buckets", "org", "billing"];
const YEAR_MS = 365 * 86_400_000;
const log = (m: string) => process.stderr.write(`${m}\n`);

let root: string | null = null;
let stopServer = async () => {};
let url = process.env.DATABASE_URL;
if (!url) {
  root = await mkdtemp(path.join(os.tmpdir(), "bench-org-audit-"));
  await chmod(root, 0o755);
  await ensureTraversable(root, postgresRunAs());
  const server = await startEmbeddedServer(path.join(root, "store"), "platform");
  url = server.url;
  stopServer = server.stop;
}
const db = createPool(url, 8);
await migrate(db, AREAS);
const env = { LOG_LEVEL: "silent", RATE_LIMIT_RPS: "1000000", DATA_DIR: path.join(root ?? os.tmpdir(), "data") };
const silent = pino({ level: "silent" });
const platform = await createPlatform(
  {
    config: loadConfig(env),
    db,
    databaseUrl: url,
    rateLimit: new MemoryRateLimitStore(),
    jobs: new JobQueue(url, silent, false),
    operatorToken: "bench-operator-token-0123456789",
    log: silent,
    env,
    secrets: (await loadSecretBox(env, env.DATA_DIR)).box,
  },
  AREAS,
);
const app = await buildApp(platform);
await app.ready();

async function api(method: "GET" | "POST", url: string, token?: string, body?: unknown) {
  const res = await app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    payload: body as never,
  });
  return { status: res.statusCode, json: JSON.parse(res.body) };
}

try {
  // ---------------------------------------------------------------- set-up
  const signup = async (i: number) => {
    const res = await api("POST", "/v1/auth/signup", undefined, {
      email: `bench-audit-${i}@example.com`,
      password: "bench password 123",
    });
    if (res.status !== 201) throw new Error(`signup: ${res.status} ${JSON.stringify(res.json)}`);
    return { token: res.json.token as string, id: res.json.account.id as string, email: res.json.account.email };
  };
  const owner = await signup(0);
  const org = await api("POST", "/v1/org", owner.token, { name: "Bench Corp" });
  if (org.status !== 201) throw new Error(`org: ${org.status}`);
  const orgId: string = org.json.id;
  const members = [owner];
  for (let i = 1; i < MEMBERS; i++) members.push(await signup(i));
  await db.query(
    "INSERT INTO org_members (org_id, account_id, role) SELECT $1, m, 'member' FROM unnest($2::uuid[]) AS m",
    [orgId, members.slice(1).map((m) => m.id)],
  );
  // noise owners: 100 accounts acting for themselves, and another organization
  await db.query(
    `INSERT INTO accounts (id, email) SELECT gen_random_uuid(), 'noise-' || i || '@bench.invalid' FROM generate_series(1, 100) i`,
  );
  await db.query(
    `INSERT INTO orgs (id, name, owner_account_id) SELECT gen_random_uuid(), 'Noise Inc', id FROM accounts
      WHERE email = 'noise-1@bench.invalid'`,
  );

  log(`set-up: ${ROWS.toLocaleString("en")} organization rows and ${NOISE.toLocaleString("en")} others ...`);
  const t0 = performance.now();
  const start = Date.now() - YEAR_MS;
  const total = ROWS + NOISE;
  // row i of `total` is the organization's when i * ROWS / total crosses an integer: both interleave evenly in id order
  await db.query(
    `WITH params AS (
       SELECT $1::uuid AS org, $2::uuid[] AS members, $3::text[] AS actions, $4::text[] AS kinds,
              (SELECT array_agg(id ORDER BY id) FROM accounts WHERE email LIKE 'noise-%@bench.invalid') AS noise,
              (SELECT id FROM orgs WHERE name = 'Noise Inc') AS noise_org)
     INSERT INTO audit_log (account_id, owner_kind, owner_id, token_id, token_kind, action, resource_kind, target, ip,
                            status, request_id, created_at)
     SELECT CASE WHEN mine THEN members[1 + n % array_length(members, 1)] ELSE noise[1 + i % 100] END,
            CASE WHEN mine OR i % 2 = 0 THEN 'org' ELSE 'account' END,
            CASE WHEN mine THEN org WHEN i % 2 = 0 THEN noise_org ELSE noise[1 + i % 100] END,
            NULL, CASE WHEN n % 5 = 0 THEN 'scoped' ELSE 'full' END,
            CASE WHEN n % 1000 = 7 THEN $7 ELSE actions[1 + (n / 72) % array_length(actions, 1)] END,
            kinds[1 + (n / 12) % array_length(kinds, 1)],
            md5(i::text), '10.0.' || (i % 250) || '.' || (i % 200), CASE WHEN n % 50 = 0 THEN 400 ELSE 200 END,
            md5((i + 1)::text), to_timestamp($5 / 1000.0) + (i * $6::double precision / $8) * interval '1 millisecond'
       FROM params, generate_series(1, $8::bigint) AS i,
            -- n: how many of the organization's rows come up to row i; mine: row i is one of them
            LATERAL (SELECT floor(i * $9::double precision)::bigint AS n,
                            floor(i * $9::double precision) <> floor((i - 1) * $9::double precision) AS mine) m`,
    [orgId, members.map((m) => m.id), ACTIONS, KINDS, start, YEAR_MS, RARE_ACTION, total, ROWS / total],
  );
  await db.query("ANALYZE audit_log");
  const { rows: counts } = await db.query<{ mine: number; all: number }>(
    "SELECT count(*) FILTER (WHERE owner_kind = 'org' AND owner_id = $1)::int AS mine, count(*)::int AS all FROM audit_log",
    [orgId],
  );
  log(
    `set-up: ${counts[0].mine} of ${counts[0].all} rows are the organization's (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );

  const { rows: span } = await db.query<{ lo: string; hi: string }>(
    "SELECT min(id)::text AS lo, max(id)::text AS hi FROM audit_log WHERE owner_kind = 'org' AND owner_id = $1",
    [orgId],
  );
  const lo = Number(span[0].lo);
  const hi = Number(span[0].hi);

  // ---------------------------------------------------------------- scenarios
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const iso = (ms: number) => new Date(ms).toISOString();
  const window = (days: number) => {
    const from = start + rand() * (YEAR_MS - days * 86_400_000);
    return { from: new Date(from), to: new Date(from + days * 86_400_000) };
  };
  interface Case {
    query: string;
    filter: OwnerAuditFilter;
    cursor: string | null;
  }
  const qs = (c: Record<string, string | undefined>) =>
    Object.entries(c)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${encodeURIComponent(v!)}`)
      .join("&");
  const range = (days: number, extra: Partial<OwnerAuditFilter> = {}, extraQs: Record<string, string> = {}): Case => {
    const w = window(days);
    return {
      query: qs({ ...extraQs, from: iso(w.from.getTime()), to: iso(w.to.getTime()) }),
      filter: { ...extra, from: w.from, to: w.to },
      cursor: null,
    };
  };
  const scenarios: [string, () => Case][] = [
    ["first page, no filter", () => ({ query: "", filter: {}, cursor: null })],
    [
      "actor (account id)",
      () => {
        const m = pick(members);
        return { query: qs({ actor: m.id }), filter: { accountIds: [m.id] }, cursor: null };
      },
    ],
    [
      "actor (e-mail)",
      () => {
        const m = pick(members);
        return { query: qs({ actor: m.email }), filter: { accountIds: [m.id] }, cursor: null };
      },
    ],
    [
      "action",
      () => {
        const a = pick(ACTIONS);
        return { query: qs({ action: a }), filter: { action: a }, cursor: null };
      },
    ],
    [
      "action (rare, 0.1 %)",
      () => ({ query: qs({ action: RARE_ACTION }), filter: { action: RARE_ACTION }, cursor: null }),
    ],
    [
      "resource_kind",
      () => {
        const k = pick(KINDS);
        return { query: qs({ resource_kind: k }), filter: { resourceKind: k }, cursor: null };
      },
    ],
    ["from/to: 1 day", () => range(1)],
    ["from/to: 30 days", () => range(30)],
    [
      "actor + kind + 30 days",
      () => {
        const m = pick(members);
        const k = pick(KINDS);
        return range(30, { accountIds: [m.id], resourceKind: k }, { actor: m.id, resource_kind: k });
      },
    ],
    [
      "action + kind + 30 days",
      () => {
        const a = pick(ACTIONS);
        const k = pick(KINDS);
        return range(30, { action: a, resourceKind: k }, { action: a, resource_kind: k });
      },
    ],
    ["from/to: 300 days", () => range(300)],
    [
      "deep cursor (random place)",
      () => {
        const c = String(Math.floor(lo + rand() * (hi - lo)));
        return { query: qs({ cursor: c }), filter: {}, cursor: c };
      },
    ],
  ];

  /** The indexes of the plan PostgreSQL picks for the repo's query of one case, and its execution time. */
  async function explainOf(c: Case): Promise<string> {
    const owner = { kind: "org" as const, id: orgId };
    // as the service reads: bounds first, then the page, in auditRead's transaction settings
    return auditRead(db, async (tx) => {
      const t0 = performance.now();
      const bounds = await idBounds(tx, owner, c.filter);
      const boundsMs = performance.now() - t0;
      const q = ownerAuditQuery(owner, c.filter, { before: c.cursor, limit: 51 }, bounds);
      const { rows } = await tx.query<{ "QUERY PLAN": any[] }>({
        text: `EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`,
        values: q.values,
      });
      const top = rows[0]["QUERY PLAN"][0];
      const indexes = new Set<string>();
      const walk = (n: any) => {
        if (n["Index Name"]) indexes.add(n["Index Name"]);
        for (const child of n.Plans ?? []) walk(child);
      };
      walk(top.Plan);
      const ranged = c.filter.from || c.filter.to ? ` + id bounds ${boundsMs.toFixed(2)} ms` : "";
      return `${[...indexes].join(", ")} (${top["Execution Time"].toFixed(2)} ms${ranged})`;
    });
  }

  const results: string[][] = [];
  /** REQUESTS requests one after another; `next` sends one and says which case it was */
  const run = async (label: string, next: () => Promise<{ status: number; rows: number; sent: Case }>) => {
    const times: number[] = [];
    let rowsSeen = 0;
    let last: Case | null = null;
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      const r = await next();
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${label}: ${r.status}`);
      rowsSeen += r.rows;
      last = r.sent;
    }
    const p50 = pct(times, 50).toFixed(2);
    const p99 = pct(times, 99).toFixed(2);
    results.push([label, `${p50} ms`, `${p99} ms`, (rowsSeen / REQUESTS).toFixed(1), await explainOf(last!)]);
    log(`${label}: p50 ${p50} ms, p99 ${p99} ms`);
  };

  // warm-up: the token cache, prepared plans, the indexes' upper pages
  for (let i = 0; i < 50; i++) await api("GET", "/v1/org/audit", owner.token);
  for (const [label, make] of scenarios)
    await run(label, async () => {
      const sent = make();
      const r = await api("GET", `/v1/org/audit${sent.query ? `?${sent.query}` : ""}`, owner.token);
      return { status: r.status, rows: r.json.items?.length ?? 0, sent };
    });
  // deep pages followed from a random place: each request takes the previous answer's next_cursor
  let cursor = String(Math.floor(lo + rand() * (hi - lo) * 0.5));
  await run("deep pages followed (next_cursor)", async () => {
    const sent: Case = { query: qs({ cursor }), filter: {}, cursor };
    const r = await api("GET", `/v1/org/audit?${sent.query}`, owner.token);
    cursor = r.json.next_cursor ?? String(hi);
    return { status: r.status, rows: r.json.items.length, sent };
  });

  console.log(
    `\nGET /v1/org/audit over ${counts[0].mine.toLocaleString("en")} organization rows (${counts[0].all.toLocaleString("en")} in audit_log), ${REQUESTS} sequential requests per row, limit 50\n`,
  );
  printTable(["scenario", "p50", "p99", "rows/answer", "plan: indexes (execution time of one query)"], results);
} finally {
  await app.close();
  await stopPlatform(platform);
  await db.end();
  await stopServer();
  if (root) await rm(root, { recursive: true, force: true });
}
