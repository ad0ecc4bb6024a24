/**
 * The platform in this process for bench/db.ts: buildApp + job workers (as in the tests) over an embedded
 * control store, a funded account, and the API through app.inject with the waits the benchmark needs.
 */
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config/config.js";
import { type LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { MemoryRateLimitStore } from "../../src/http/rate-limit.js";
import { createPlatform, startPlatform } from "../../src/kernel/platform.js";
import { AREAS } from "../../src/areas.js";
import { loadSecretBox } from "../../src/kernel/secrets.js";
import type { DatabasesState } from "../../src/databases/module.js";
import { JobQueue } from "../../src/jobs/queue.js";
import { createPool } from "../../src/store/db.js";
import { startEmbeddedServer } from "../../src/store/embedded.js";
import { migrate } from "../../src/store/migrate.js";

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

  return { store, db, jobs, app, databases, api, token, commandDone, idle };
}
