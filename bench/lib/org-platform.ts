/**
 * The platform for `npm run bench:org` (bench/org.ts): src/main.ts as a real process (ROLES=api) over an embedded
 * control store this process also reaches directly (fixtures in SQL), and a small JSON client for its API.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startEmbeddedServer } from "../../src/store/embedded.js";
import { createPool, type Db } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { startPlatform } from "./processes.js";

export interface ApiAnswer {
  status: number;
  json: any;
  /** bytes of the request body */
  sent: number;
}

export interface OrgPlatform {
  url: string;
  /** the control store, for fixtures */
  db: Db;
  api(method: string, url: string, token?: string, body?: unknown): Promise<ApiAnswer>;
  /** a new account (signed up through the API) owning a new organization */
  newOrg(name: string): Promise<{ token: string; accountId: string; orgId: string }>;
  stop(): Promise<void>;
}

export async function startOrgPlatform(): Promise<OrgPlatform> {
  const root = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "bench-org-"));
  await chmod(root, 0o755); // the embedded store's system user passes through
  const store = await startEmbeddedServer(path.join(root, "store"), "platform");
  const db = createPool(store.url, 4);
  await migrate(db);
  const { child, url } = await startPlatform({
    dataDir: path.join(root, "platform"),
    rateLimitRps: 1_000_000,
    env: { DATABASE_URL: store.url, ROLES: "api" },
    // BENCH_PROF=<dir>: the platform writes a CPU profile there when it stops
    nodeArgs: process.env.BENCH_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [],
  });
  let seq = 0;
  const api = async (method: string, route: string, token?: string, body?: unknown): Promise<ApiAnswer> => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const res = await fetch(url + route, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(text !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: text,
    });
    return { status: res.status, json: await res.json().catch(() => null), sent: text?.length ?? 0 };
  };
  return {
    url,
    db,
    api,
    async newOrg(name) {
      const email = `bench-owner-${process.pid}-${seq++}@bench.invalid`;
      const signup = await api("POST", "/v1/auth/signup", undefined, { email, password: "long enough password" });
      if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.json)}`);
      const token = signup.json.token as string;
      const org = await api("POST", "/v1/org", token, { name });
      if (org.status !== 201) throw new Error(`create org: ${org.status} ${JSON.stringify(org.json)}`);
      return { token, accountId: signup.json.account.id, orgId: org.json.id };
    },
    async stop() {
      await child.stop();
      await db.end();
      await store.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}
