/**
 * The platform in this process for bench/db.ts: buildApp + job workers (as in the tests) over an embedded
 * control store, a funded account, and the API through app.inject with the waits the benchmark needs.
 */
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import pg from "pg";
import pino from "pino";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config/config.js";
import { type LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { MemoryRateLimitStore } from "../../src/http/rate-limit.js";
import { createPlatform, startPlatform, stopPlatform } from "../../src/kernel/platform.js";
import { AREAS } from "../../src/areas.js";
import { loadSecretBox } from "../../src/kernel/secrets.js";
import type { DatabasesState } from "../../src/databases/module.js";
import { JobQueue } from "../../src/jobs/queue.js";
import { createPool } from "../../src/store/db.js";
import { startEmbeddedServer } from "../../src/store/embedded.js";
import { migrate } from "../../src/store/migrate.js";

const run = promisify(execFile);
const OPERATOR_TOKEN = "bench-operator-token-0123456789";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v !== undefined) return v;
    await sleep(everyMs);
  }
  throw new Error(`timed out: ${what}`);
}

/** A client for a database URL as the API gives it (the certificate is self-signed, so it is not verified). */
export function clientFor(url: URL): pg.Client {
  return new pg.Client({
    host: url.hostname,
    port: Number(url.port),
    user: url.username,
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    ssl: { rejectUnauthorized: false },
  });
}

/** Starts the platform with its instances under `root`/instances and signs up a funded user. */
export async function startDbPlatform(root: string) {
  const store = await startEmbeddedServer(path.join(root, "store"), "platform");
  const db = createPool(store.url, 10);
  await migrate(db, AREAS);
  const env = {
    LOG_LEVEL: "silent",
    RATE_LIMIT_RPS: "1000000",
    DATA_DIR: path.join(root, "instances"),
    DB_RESTORE_ENABLED: "1",
    DB_MAX_INSTANCES: "100",
    REGISTRY_PORT: "0", // the platform's registry is not what this measures: any free port, never a clash
    // nor are the edge and the S3 gateway: free ports, so a platform running beside the benchmark is no clash
    EDGE_PORT: "0",
    S3_PORT: "0",
  };
  const config = loadConfig(env);
  const benchLog = pino({ level: "silent" });
  const jobs = new JobQueue(store.url, benchLog, true);
  const secrets = (await loadSecretBox(env, path.join(root, "instances"))).box;
  const platform = await createPlatform(
    {
      config,
      db,
      databaseUrl: store.url,
      rateLimit: new MemoryRateLimitStore(),
      jobs,
      operatorToken: OPERATOR_TOKEN,
      log: benchLog,
      env,
      secrets,
    },
    AREAS,
  );
  const databases = platform.state<DatabasesState>("databases").provider as LocalDatabaseProvider;
  const app = await buildApp(platform);
  await app.ready();
  await startPlatform(platform, { schedule: false });

  async function api(
    method: "GET" | "POST" | "PUT" | "DELETE",
    url: string,
    token?: string,
    body?: unknown,
  ): Promise<{ status: number; json: any }> {
    const res = await app.inject({
      method,
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      payload: body as never,
    });
    return { status: res.statusCode, json: res.body ? JSON.parse(res.body) : null };
  }

  const signup = await api("POST", "/v1/auth/signup", undefined, {
    email: `bench-${process.pid}@example.com`,
    password: "bench password 123",
  });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.json)}`);
  const token: string = signup.json.token;
  // paid sizes need funds where billing is built in; the benchmark itself uses dev instances
  await api("POST", `/v1/operator/accounts/${signup.json.account.id}/credit`, OPERATOR_TOKEN, {
    amount: 10_000_000,
    currency: "KRW",
    reason: "bench",
  });

  /** The instance's detail once the command succeeded; throws when it failed. */
  const commandDone = (id: string, commandId: string, timeoutMs = 600_000, everyMs = 10) =>
    until(
      `command ${commandId}`,
      async () => {
        const d = (await api("GET", `/v1/databases/${id}`, token)).json;
        const c = d.commands?.find((x: any) => x.id === commandId);
        if (c?.status === "failed") throw new Error(`${c.kind} failed: ${c.error}`);
        return c?.status === "succeeded" ? d : undefined;
      },
      timeoutMs,
      everyMs,
    );

  /** The instance's detail once none of its commands is queued or running. */
  const idle = (id: string) =>
    until(
      `idle ${id}`,
      async () => {
        const d = (await api("GET", `/v1/databases/${id}`, token)).json;
        return d.commands.every((c: any) => c.status === "succeeded" || c.status === "failed") ? d : undefined;
      },
      120_000,
      50,
    );

  /**
   * Everything down, as the tests' app does: the areas' stop hooks too (the registry's process, watchers, the warm
   * pool), not only the workers. Stopping just the workers left those running against a store already gone, which
   * kept the process alive after its report, retrying (once out of memory).
   */
  async function close(): Promise<void> {
    await app.close().catch(() => {});
    await stopPlatform(platform).catch(() => {});
    const { rows } = await db
      .query<{ id: string }>("SELECT id FROM databases")
      .catch(() => ({ rows: [] as { id: string }[] }));
    for (const r of rows) await databases.purge(r.id).catch(() => {});
    await databases.idle().catch(() => {}); // a warm-pool initdb still running
    await db.end().catch(() => {});
    await store.stop().catch(() => {});
  }

  return { store, db, jobs, app, databases, api, token, commandDone, idle, close };
}

export type DbPlatform = Awaited<ReturnType<typeof startDbPlatform>>;

/** A data directory as the local provider lays it out under `root` (node a: the primary of a database with no standby). */
export const dataDirOf = (root: string, id: string) => path.join(root, "instances", "instances", id, "nodes", "a");

/**
 * A running database of about `mb` MiB (~900-byte rows, 8 to a page: ~1.05 GB per million rows), checkpointed by
 * the customer's admin role (so the next checkpoint has no backlog), with a client connected to it.
 */
export async function filledDatabase(p: DbPlatform, name: string, mb: number, log: (msg: string) => void) {
  const made = await p.api("POST", "/v1/databases", p.token, { name });
  if (made.status !== 201) throw new Error(`create ${name}: ${made.status} ${JSON.stringify(made.json)}`);
  const id: string = made.json.id;
  await until(
    `${name} running`,
    async () => ((await p.api("GET", `/v1/databases/${id}`, p.token)).json.state === "running" ? true : undefined),
    120_000,
    50,
  );
  await p.idle(id);
  const url = new URL(made.json.database_url);
  const client = clientFor(url);
  client.on("error", (err) => log(`${name} client: ${err.message}`));
  await client.connect();
  const fillStart = performance.now();
  await client.query(
    `CREATE TABLE big AS SELECT g, repeat(md5(g::text), 28) AS pad FROM generate_series(1, ${Math.round((mb / 1024) * 1_000_000)}) g`,
  );
  const admin = clientFor(new URL(made.json.superuser_database_url));
  await admin.connect();
  await admin.query("CHECKPOINT");
  await admin.end();
  const bytes = Number((await client.query("SELECT pg_database_size(current_database()) AS s")).rows[0].s);
  const rows = Number((await client.query("SELECT count(*) AS n FROM big")).rows[0].n);
  log(
    `${name}: filled ${(bytes / 2 ** 30).toFixed(2)} GiB (${rows} rows) in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`,
  );
  return { id, url, client, bytes, rows };
}

/** Rows 1-5 of `marks` before the moment it answers, 6-10 after it: a restore to that moment must hold exactly 5. */
export async function marksAround(client: pg.Client): Promise<Date> {
  await client.query("CREATE TABLE marks (n int)");
  await client.query("INSERT INTO marks SELECT generate_series(1, 5)");
  await sleep(300);
  const target = new Date();
  await sleep(300);
  await client.query("INSERT INTO marks SELECT generate_series(6, 10)");
  return target;
}

/** The platform's point-in-time restore in place (POST .../restore {target_time}) until its command succeeded: ms. */
export async function pitrRestore(p: DbPlatform, id: string, target: Date): Promise<number> {
  const t0 = performance.now();
  const restore = await p.api("POST", `/v1/databases/${id}/restore`, p.token, { target_time: target.toISOString() });
  if (restore.status !== 202) throw new Error(`restore: ${restore.status} ${JSON.stringify(restore.json)}`);
  await p.commandDone(id, restore.json.command_id, 1_800_000, 20);
  return performance.now() - t0;
}

/** `cp -r` of a data directory to a scratch place beside it (removed afterwards): ms. */
export async function timeCpR(dataDir: string, scratch: string): Promise<number> {
  const t0 = performance.now();
  await run("cp", ["-r", dataDir, scratch]);
  const took = performance.now() - t0;
  await rm(scratch, { recursive: true, force: true });
  return took;
}
