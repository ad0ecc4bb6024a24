import { randomBytes } from "node:crypto";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import pino from "pino";
import pg from "pg";
import { buildApp } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config/config.js";
import { createPool, type Db } from "../../src/store/db.js";
import { JobQueue } from "../../src/jobs/queue.js";
import { createPlatform, startPlatform, stopPlatform } from "../../src/kernel/platform.js";
import type { AreaModule, Platform } from "../../src/kernel/context.js";
import { AREAS } from "../../src/areas.js";
import { declareAreas } from "../../src/kernel/declarations.js";
import { migrate } from "../../src/store/migrate.js";
import { loadSecretBox } from "../../src/kernel/secrets.js";
import type { DatabasesState } from "../../src/databases/module.js";
import path from "node:path";
import { rm } from "node:fs/promises";
import { type LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { MemoryRateLimitStore, type RateLimitStore } from "../../src/http/rate-limit.js";
import { cleanupHost } from "./host-cleanup.js";

export const OPERATOR_TOKEN = "test-operator-token-0123456789";
export const FLEET_TOKEN = "test-fleet-token-0123456789abc";
/** one platform key for every test app, so apps sharing a store open each other's secrets, as hosts must */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString("base64");

// the areas' error codes and scope resources, as a platform's start-up declares them: tests of the scope grammar
// and the catalog run before (or without) any app
declareAreas(AREAS);

function adminUrl(): string {
  const url = process.env.TEST_ADMIN_URL;
  if (!url) throw new Error("run the tests with `npm test` (test/run.ts starts the database server)");
  return url;
}

/** A fresh database cloned from the migrated template. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${process.env.TEST_TEMPLATE_DB}`);
  await admin.end();
  const url = adminUrl().replace(/\/postgres$/, `/${name}`);
  return {
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  url: string;
  config: Config;
  jobs: JobQueue;
  platform: Platform;
  databases: LocalDatabaseProvider;
  close: () => Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  rateLimit?: RateLimitStore;
  databaseUrl?: string;
  startJobs?: boolean;
  /** runs on the built app before it is made ready */
  extend?: (app: FastifyInstance) => void;
  /** the areas list (default src/areas.ts); areas beyond it get their migrations applied to the test database */
  areas?: readonly AreaModule<any, any>[];
}

/** Builds the real app over a real database; the rate limit is raised unless a test sets RATE_LIMIT_RPS. */
export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const database = opts.databaseUrl ? { url: opts.databaseUrl, drop: async () => {} } : await freshDatabase();
  // each app has a data directory of its own: managed servers, keys and files never meet another test's
  const providerDir = path.resolve(`.test-data/instances-${randomBytes(4).toString("hex")}`);
  const env = {
    LOG_LEVEL: "silent",
    RATE_LIMIT_RPS: "1000000",
    FLEET_TOKEN,
    PLATFORM_SECRET_KEY: TEST_SECRET_KEY,
    DB_MAX_INSTANCES: "20",
    DATA_DIR: providerDir,
    // apps started in parallel must not share the registry's or the edge's default port (edge tests read the edge's)
    REGISTRY_PORT: "0",
    EDGE_PORT: "0",
    S3_PORT: "0",
    // the fakes (GitLab, Cloudflare, DNS) listen on loopback, which the outbound client refuses unless allowed
    OUTBOUND_ALLOW: "loopback",
    // the edge's data plane as the run asks (EDGE_DATA_PLANE=node|nginx npx tsx test/run.ts …); unset: the default
    ...(process.env.EDGE_DATA_PLANE ? { EDGE_DATA_PLANE: process.env.EDGE_DATA_PLANE } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const db = createPool(database.url, 5);
  if (opts.areas) await migrate(db, opts.areas); // the template holds src/areas.ts's; others' are applied here
  const log = pino({ level: "silent" });
  const jobs = new JobQueue(database.url, log, opts.startJobs ?? false);
  const rateLimit = opts.rateLimit ?? new MemoryRateLimitStore();
  const secrets = (await loadSecretBox(env, providerDir)).box;
  const platform = await createPlatform(
    { config, db, databaseUrl: database.url, rateLimit, jobs, operatorToken: OPERATOR_TOKEN, log, env, secrets },
    opts.areas ?? AREAS,
  );
  const databases = platform.state<DatabasesState>("databases").provider as LocalDatabaseProvider;
  const app = await buildApp(platform, { schemasOnFirstUse: true });
  try {
    opts.extend?.(app);
    await app.ready();
  } catch (err) {
    await app.close().catch(() => {});
    await db.end();
    if (!opts.databaseUrl) await database.drop();
    throw err;
  }
  // periodic schedules stay off in tests: each test runs the jobs it checks
  if (opts.startJobs) await startPlatform(platform, { schedule: false });

  return {
    app,
    db,
    url: database.url,
    config,
    jobs,
    platform,
    databases,
    close: async () => {
      await app.close();
      await stopPlatform(platform);
      // managed servers are daemons: stop and delete every one this app created
      const { rows } = await db.query<{ id: string }>("SELECT id FROM databases");
      for (const r of rows) await databases.purge(r.id).catch(() => {});
      await databases.idle(); // a warm-pool initdb still running
      await cleanupHost(db, platform.kernel.require("hosts").local.id, providerDir);
      // a server stopped a moment ago may still be writing its last files: rm retries ENOTEMPTY (a CI run under load)
      await rm(providerDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      await db.end();
      if (!opts.rateLimit) await rateLimit.close();
      if (!opts.databaseUrl) await database.drop();
    },
  };
}

export interface Call {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  url: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export async function call(app: FastifyInstance, c: Call): Promise<LightMyRequestResponse & { json: () => any }> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.token) headers.authorization = `Bearer ${c.token}`;
  return app.inject({ method: c.method ?? "GET", url: c.url, headers, payload: c.body as never });
}

let counter = 0;
/** Signs up a new account through the API and returns its token. */
export async function signup(
  app: FastifyInstance,
  email?: string,
): Promise<{ token: string; id: string; email: string }> {
  const e = email ?? `user${process.pid}-${Date.now()}-${counter++}@example.com`;
  const res = await call(app, {
    method: "POST",
    url: "/v1/auth/signup",
    body: { email: e, password: "correct horse battery" },
  });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
  const body = res.json();
  return { token: body.token, id: body.account.id, email: body.account.email };
}

/** Issues a scoped key for the account behind token. */
export async function scopedKey(
  app: FastifyInstance,
  token: string,
  scopes: string[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await call(app, {
    method: "POST",
    url: "/v1/api-keys",
    token,
    body: { name: "test key", scopes, ...extra },
  });
  if (res.statusCode !== 201) throw new Error(`key issue failed: ${res.statusCode} ${res.body}`);
  return res.json().key;
}

export function expectError(res: { statusCode: number; json: () => any }, status: number, code?: string): void {
  const body = res.json();
  if (
    res.statusCode !== status ||
    !body?.error ||
    typeof body.error.message !== "string" ||
    (code && body.error.code !== code)
  ) {
    throw new Error(`expected ${status} ${code ?? ""}, got ${res.statusCode} ${JSON.stringify(body)}`);
  }
}
