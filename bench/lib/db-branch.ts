/**
 * bench/db.ts's branch figures (issue 30): a database of BENCH_BRANCH_MB (default 1024) branched at now through the
 * API (POST /v1/databases/{id}/branches until its command succeeded), beside `cp -r` of its data directory and beside
 * a full point-in-time restore of the same database (POST .../restore {target_time}), measured in the same run; also a
 * branch at a past moment, and the parent's insert latency while it is branched.
 */
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import type { startDbPlatform } from "./db-platform.js";
import { clientFor, sleep, until } from "./db-platform.js";
import { ms, secs } from "./report.js";

const run = promisify(execFile);
type DbPlatform = Awaited<ReturnType<typeof startDbPlatform>>;

export async function benchBranch(
  platform: DbPlatform,
  root: string,
  mb: number,
  log: (msg: string) => void,
): Promise<{ rows: string[][]; ratio: number }> {
  const { api, token, commandDone, idle } = platform;
  const made = await api("POST", "/v1/databases", token, { name: `bench-branch-${process.pid}` });
  if (made.status !== 201) throw new Error(`create: ${made.status} ${JSON.stringify(made.json)}`);
  const id = made.json.id;
  await until(
    "running",
    async () => ((await api("GET", `/v1/databases/${id}`, token)).json.state === "running" ? true : undefined),
    120_000,
    50,
  );
  await idle(id);
  const url = new URL(made.json.database_url);
  const client = clientFor(url);
  client.on("error", (err) => log(`branch client: ${err.message}`));
  await client.connect();
  // ~900-byte rows, 8 to a page: ~1.05 GB per million rows
  await client.query(
    `CREATE TABLE big AS SELECT g, repeat(md5(g::text), 28) AS pad FROM generate_series(1, ${Math.round((mb / 1024) * 1_000_000)}) g`,
  );
  const admin = clientFor(new URL(made.json.superuser_database_url));
  await admin.connect();
  await admin.query("CHECKPOINT");
  await admin.end();
  const bytes = Number((await client.query("SELECT pg_database_size(current_database()) AS s")).rows[0].s);
  const bigRows = Number((await client.query("SELECT count(*) AS n FROM big")).rows[0].n);
  // the base backup a restore (and a branch at a past moment) starts from, as the daily one would be
  const snap = await api("POST", `/v1/databases/${id}/backup`, token, { label: "branch-bench" });
  await commandDone(id, snap.json.command_id, 1_800_000, 50);
  log(`branch bench: ${(bytes / 2 ** 20).toFixed(0)} MiB database, ${bigRows} rows`);

  // bare reference: cp -r of the data directory
  const dataDir = path.join(root, "instances", "instances", id, "nodes", "a");
  const copyDir = path.join(root, "branch-copy");
  const cpStart = performance.now();
  await run("cp", ["-r", dataDir, copyDir]);
  const cpMs = performance.now() - cpStart;
  await rm(copyDir, { recursive: true, force: true });

  await client.query("CREATE TABLE marks (n int)");
  await client.query("INSERT INTO marks SELECT generate_series(1, 5)");
  await sleep(300);
  const target = new Date();
  await sleep(300);
  await client.query("INSERT INTO marks SELECT generate_series(6, 10)");

  // a writer on the parent: one insert (one commit) every 10 ms, its latency before and during the branching
  const latencies: { at: number; ms: number }[] = [];
  const writer = clientFor(url);
  await writer.connect();
  let writing = true;
  let writeErrors = 0;
  const loop = (async () => {
    while (writing) {
      const t0 = performance.now();
      await writer.query("INSERT INTO marks VALUES (100)").catch(() => writeErrors++);
      latencies.push({ at: t0, ms: performance.now() - t0 });
      await sleep(10);
    }
  })();
  await sleep(1000);

  const branchAt = async (body: Record<string, unknown>) => {
    const t0 = performance.now();
    const res = await api("POST", `/v1/databases/${id}/branches`, token, body);
    if (res.status !== 201) throw new Error(`branch: ${res.status} ${JSON.stringify(res.json)}`);
    await commandDone(res.json.id, res.json.command_id, 1_800_000, 20);
    const took = performance.now() - t0;
    const c = clientFor(new URL(res.json.database_url));
    await c.connect();
    const n = Number((await c.query("SELECT count(*) AS n FROM big")).rows[0].n);
    const marks = Number((await c.query("SELECT count(*) FILTER (WHERE n <= 10) AS n FROM marks")).rows[0].n);
    await c.end();
    if (n !== bigRows) throw new Error(`branch holds ${n} rows of big, expected ${bigRows}`);
    const { rows } = await platform.db.query("SELECT result FROM database_commands WHERE id = $1", [
      res.json.command_id,
    ]);
    await idle(res.json.id); // its first base backup
    const del = await api("DELETE", `/v1/databases/${res.json.id}`, token);
    await commandDone(res.json.id, del.json.command_id, 120_000, 50);
    return {
      took,
      marks,
      result: rows[0].result as { method: string; copy: string; copy_ms: number; start_ms: number },
    };
  };

  log("branch at now");
  const branchStart = performance.now();
  const now = await branchAt({});
  const branchEnd = performance.now();
  writing = false;
  await loop;
  await writer.end();
  const before = latencies.filter((l) => l.at < branchStart).map((l) => l.ms);
  const during = latencies.filter((l) => l.at >= branchStart && l.at < branchEnd).map((l) => l.ms);

  log("branch at a past moment");
  const past = await branchAt({ at: target.toISOString() });
  if (past.marks !== 5) throw new Error(`the branch at a past moment holds ${past.marks} marks, expected 5`);

  log("PITR restore of the same database");
  const pitrStart = performance.now();
  const restore = await api("POST", `/v1/databases/${id}/restore`, token, { target_time: target.toISOString() });
  if (restore.status !== 202) throw new Error(`restore: ${restore.status} ${JSON.stringify(restore.json)}`);
  await commandDone(id, restore.json.command_id, 1_800_000, 20);
  const pitrMs = performance.now() - pitrStart;
  await client.end().catch(() => {});

  const size = `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  const ratio = now.took / pitrMs;
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : 0);
  return {
    ratio,
    rows: [
      [
        `branch at now, ${size} (${now.result.method}, ${now.result.copy})`,
        secs(now.took),
        `PITR restore of it: ${secs(pitrMs)}`,
        `${ratio.toFixed(2)}×`,
      ],
      [
        `  of which copy ${secs(now.result.copy_ms)}, start ${secs(now.result.start_ms)}`,
        "",
        `cp -r of its data directory: ${secs(cpMs)}`,
        `${(now.took / cpMs).toFixed(2)}×`,
      ],
      [
        `branch at a past moment, ${size} (${past.result.method})`,
        secs(past.took),
        `PITR restore: ${secs(pitrMs)}`,
        `${(past.took / pitrMs).toFixed(2)}×`,
      ],
      [
        `parent inserts during the branch: ${during.length}, ${writeErrors} errors`,
        `max ${ms(max(during))}`,
        `before it: max ${ms(max(before))}`,
        "",
      ],
    ],
  };
}
