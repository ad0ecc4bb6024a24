/**
 * The HR syncs of `npm run bench:org` (bench/org.ts runs it; `tsx bench/org-sync.ts` runs it alone):
 *  - POST /v1/org/departments/sync of BENCH_DEPARTMENTS (5,000) departments, a tree 8 wide listed in a shuffled
 *    order (the service orders parents first): the first run inserts them all, the re-run skips them all;
 *  - POST /v1/org/members/sync of BENCH_MEMBERS (10,000) members: the accounts and their memberships (no department)
 *    are fixtures written in SQL, the first run gives each a department (and every 20th the admin role), the re-run
 *    skips them all;
 *  - beside them, GET /v1/org/departments of the whole chart.
 * One request each, timed from the client (request sent to answer read); BENCH_ROUNDS (3) rounds, each on a new
 * organization, median with the range.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { envNumber } from "./lib/measure.js";
import { printTable } from "./lib/report.js";
import { startOrgPlatform, type ApiAnswer, type OrgPlatform } from "./lib/org-platform.js";

const log = (m: string) => process.stderr.write(`${m}\n`);

interface Case {
  name: string;
  items: number;
  ms: number[];
  bytes: number;
}

function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function timed(what: string, fn: () => Promise<ApiAnswer>, check: (a: ApiAnswer) => boolean) {
  const t0 = performance.now();
  const a = await fn();
  const ms = performance.now() - t0;
  if (a.status !== 200 || !check(a))
    throw new Error(`${what}: ${a.status} ${JSON.stringify(a.json?.counts ?? a.json).slice(0, 500)}`);
  return { ms, a };
}

/** Member fixtures: accounts and memberships without a department, straight into the store. */
async function memberFixtures(p: OrgPlatform, orgId: string, round: number, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  const emails = ids.map((_, i) => `r${round}-m${i}-${process.pid}@bench.invalid`);
  await p.db.query("INSERT INTO accounts (id, email) SELECT * FROM unnest($1::uuid[], $2::text[])", [ids, emails]);
  await p.db.query(
    "INSERT INTO org_members (org_id, account_id, role) SELECT $1, a, 'member' FROM unnest($2::uuid[]) a",
    [orgId, ids],
  );
  return emails;
}

export async function orgSyncBench(p: OrgPlatform): Promise<void> {
  const ROUNDS = Math.round(envNumber("BENCH_ROUNDS", 3, 1));
  const DEPARTMENTS = Math.round(envNumber("BENCH_DEPARTMENTS", 5000, 1));
  const MEMBERS = Math.round(envNumber("BENCH_MEMBERS", 10_000, 1));
  const code = (i: number) => `D${String(i).padStart(5, "0")}`;
  const departments = Array.from({ length: DEPARTMENTS }, (_, i) => ({
    code: code(i),
    name: `Department ${i}`,
    parent_code: i === 0 ? null : code(Math.floor((i - 1) / 8)),
    ...(i % 10 === 0 ? { approver_email: `lead${i}@bench.invalid` } : {}),
  }));
  const cases: Record<string, Case> = {};
  const add = (name: string, items: number, ms: number, bytes: number) => (
    (cases[name] ??= { name, items, ms: [], bytes }).ms.push(ms),
    undefined
  );

  for (let round = 0; round < ROUNDS; round++) {
    log(`round ${round + 1}/${ROUNDS}: ${DEPARTMENTS} departments, ${MEMBERS} members ...`);
    const org = await p.newOrg(`Bench ${round}`);
    const body = { departments: shuffled(departments, round + 1), implicit_deletion: true };
    const sync = () => p.api("POST", "/v1/org/departments/sync", org.token, body);
    const d1 = await timed("departments first run", sync, (a) => a.json.counts.insert === DEPARTMENTS);
    add("departments sync, first run (all insert)", DEPARTMENTS, d1.ms, d1.a.sent);
    const d2 = await timed("departments re-run", sync, (a) => a.json.counts.skip === DEPARTMENTS);
    add("departments sync, re-run (all skip)", DEPARTMENTS, d2.ms, d2.a.sent);
    const list = await timed(
      "departments list",
      () => p.api("GET", "/v1/org/departments", org.token),
      (a) => a.json.items.length === DEPARTMENTS,
    );
    add("departments list (GET)", DEPARTMENTS, list.ms, 0);

    const emails = await memberFixtures(p, org.orgId, round, MEMBERS);
    const members = emails.map((email, i) => ({
      email,
      department_code: code(i % DEPARTMENTS),
      role: i % 20 === 0 ? "admin" : "member",
    }));
    const msync = () => p.api("POST", "/v1/org/members/sync", org.token, { members: shuffled(members, round + 7) });
    const m1 = await timed("members first run", msync, (a) => a.json.counts.update === MEMBERS);
    add("members sync, first run (all update)", MEMBERS, m1.ms, m1.a.sent);
    const m2 = await timed("members re-run", msync, (a) => a.json.counts.skip === MEMBERS);
    add("members sync, re-run (all skip)", MEMBERS, m2.ms, m2.a.sent);
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  console.log(`\nHR syncs, one request each, median of ${ROUNDS} round(s) (range):\n`);
  printTable(
    ["case", "items", "time", "range", "per item", "request"],
    Object.values(cases).map((c) => [
      c.name,
      c.items.toLocaleString("en"),
      `${Math.round(median(c.ms))} ms`,
      `${Math.round(Math.min(...c.ms))}-${Math.round(Math.max(...c.ms))} ms`,
      `${((median(c.ms) * 1000) / c.items).toFixed(0)} µs`,
      c.bytes ? `${(c.bytes / 1024).toFixed(0)} KiB` : "-",
    ]),
  );
}

// run alone: tsx bench/org-sync.ts
if (import.meta.url === `file://${process.argv[1]}`) {
  const p = await startOrgPlatform();
  try {
    await orgSyncBench(p);
  } finally {
    await p.stop();
  }
}
