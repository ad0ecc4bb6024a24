/**
 * bench/db.ts's branch figures (issue 30): a database of BENCH_BRANCH_MB (default 1024) branched at now through the
 * API (POST /v1/databases/{id}/branches until its command succeeded), beside `cp -r` of its data directory and beside
 * a full point-in-time restore of the same database (POST .../restore {target_time}), measured in the same run; also a
 * branch at a past moment, and the parent's insert latency while it is branched. The branch at now is broken down
 * into the request, the wait for a worker, the job's steps (the command's `timings_ms`) and the moment GET saw it.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import {
  clientFor,
  dataDirOf,
  filledDatabase,
  marksAround,
  pitrRestore,
  sleep,
  timeCpR,
  type DbPlatform,
} from "./db-platform.js";
import { ms, secs } from "./report.js";

interface BranchSample {
  took: number;
  marks: number;
  /** POST answered, queued → picked up, the job, job done → seen by GET: ms */
  request: number;
  queued: number;
  job: number;
  observed: number;
  result: { method: string; copy: string; timings_ms: Record<string, number> };
}

export async function benchBranch(
  platform: DbPlatform,
  root: string,
  mb: number,
  log: (msg: string) => void,
): Promise<{ rows: string[][]; ratio: number }> {
  const { api, token, commandDone, idle } = platform;
  const parent = await filledDatabase(platform, `bench-branch-${process.pid}`, mb, log);
  const { id, client } = parent;
  // the base backup a restore (and a branch at a past moment) starts from, as the daily one would be
  const snap = await api("POST", `/v1/databases/${id}/backup`, token, { label: "branch-bench" });
  await commandDone(id, snap.json.command_id, 1_800_000, 50);

  const cpMs = await timeCpR(dataDirOf(root, id), path.join(root, "branch-copy"));
  const target = await marksAround(client);

  // a writer on the parent: one insert (one commit) every 10 ms, its latency before and during the branching
  const latencies: { at: number; ms: number }[] = [];
  const writer = clientFor(parent.url);
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

  const branchAt = async (body: Record<string, unknown>): Promise<BranchSample> => {
    const t0 = performance.now();
    const wall0 = Date.now();
    const res = await api("POST", `/v1/databases/${id}/branches`, token, body);
    if (res.status !== 201) throw new Error(`branch: ${res.status} ${JSON.stringify(res.json)}`);
    const request = performance.now() - t0;
    await commandDone(res.json.id, res.json.command_id, 1_800_000, 20);
    const took = performance.now() - t0;
    const c = clientFor(new URL(res.json.database_url));
    await c.connect();
    const n = Number((await c.query("SELECT count(*) AS n FROM big")).rows[0].n);
    const marks = Number((await c.query("SELECT count(*) FILTER (WHERE n <= 10) AS n FROM marks")).rows[0].n);
    await c.end();
    if (n !== parent.rows) throw new Error(`branch holds ${n} rows of big, expected ${parent.rows}`);
    const { rows } = await platform.db.query<{
      result: BranchSample["result"];
      created_at: Date;
      started_at: Date;
      finished_at: Date;
    }>("SELECT result, created_at, started_at, finished_at FROM database_commands WHERE id = $1", [
      res.json.command_id,
    ]);
    const cmd = rows[0];
    await idle(res.json.id); // its first base backup
    const del = await api("DELETE", `/v1/databases/${res.json.id}`, token);
    await commandDone(res.json.id, del.json.command_id, 120_000, 50);
    return {
      took,
      marks,
      request,
      queued: cmd.started_at.getTime() - cmd.created_at.getTime(),
      job: cmd.finished_at.getTime() - cmd.started_at.getTime(),
      observed: wall0 + took - cmd.finished_at.getTime(),
      result: cmd.result,
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
  log(`branch at now: ${JSON.stringify({ ...now, result: undefined, ...now.result })}`);

  log("branch at a past moment");
  const past = await branchAt({ at: target.toISOString() });
  if (past.marks !== 5) throw new Error(`the branch at a past moment holds ${past.marks} marks, expected 5`);

  log("PITR restore of the same database");
  const pitrMs = await pitrRestore(platform, id, target);
  await client.end().catch(() => {});

  const size = `${(parent.bytes / 2 ** 30).toFixed(2)} GiB`;
  const ratio = now.took / pitrMs;
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : 0);
  const steps = Object.entries(now.result.timings_ms ?? {})
    .filter(([, v]) => v >= 1)
    .map(([k, v]) => `${k.replace(/Ms$/, "")} ${ms(v)}`)
    .join(", ");
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
        `  request ${ms(now.request)}, queued ${ms(now.queued)}, job ${ms(now.job)}, seen ${ms(now.observed)}`,
        "",
        `cp -r of its data directory: ${secs(cpMs)}`,
        `${(now.took / cpMs).toFixed(2)}×`,
      ],
      [`  job: ${steps}`, "", "", ""],
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
