import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "../../src/pgserver/cluster.js";
import { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { freshDatabase } from "../helpers/app.js";

function startPlatform(env: Record<string, string>): ChildProcess {
  // node itself, not a wrapper, so SIGKILL hits the platform process
  return spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: {
      PATH: process.env.PATH!,
      LOG_LEVEL: "warn",
      EDGE_PORT: "0",
      REGISTRY_PORT: "0",
      S3_PORT: "0",
      EDGE_PROCESS: "inline",
      ...env,
    },
    stdio: "ignore",
  });
}

async function api(
  base: string,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(base + url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test("kill -9 of the platform during provisioning, during a backup and during stop: after a restart each instance reaches its desired state", async () => {
  const database = await freshDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-crash-"));
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PORT: String(port),
    OPERATOR_TOKEN: "operator-token-for-crash-test",
  };
  let platform = startPlatform(env);
  const ids: string[] = [];
  try {
    await until("the API", async () => ((await api(base, "GET", "/v1/edition")).status === 200 ? true : undefined));
    const { json: user } = await api(base, "POST", "/v1/auth/signup", undefined, {
      email: "crash@example.com",
      password: "long enough pw",
    });
    const created = await api(base, "POST", "/v1/databases", user.token, { name: "crashy" });
    assert.equal(created.status, 201);
    ids.push(created.json.id);
    platform.kill("SIGKILL"); // mid-provisioning: the job has just been picked up or not yet
    await new Promise((r) => platform.once("exit", r));

    platform = startPlatform(env);
    const running = await until("running after restart", async () => {
      const { json } = await api(base, "GET", `/v1/databases/${created.json.id}`, user.token);
      return json?.state === "running" ? json : undefined;
    });
    assert.equal(running.port, created.json.port, "the URL given at creation still holds");
    const client = new pg.Client({
      connectionString: created.json.database_url.replace("?sslmode=require", ""),
      ssl: { rejectUnauthorized: false },
    });
    await client.connect();
    await client.query("CREATE TABLE survived (v int); INSERT INTO survived VALUES (42)");
    await client.end();

    // mid-backup: the snapshot command is picked up again after the restart and completes, verified
    const backup = await api(base, "POST", `/v1/databases/${created.json.id}/backup`, user.token, {
      label: "interrupted",
    });
    assert.equal(backup.status, 202);
    await new Promise((r) => setTimeout(r, 150));
    platform.kill("SIGKILL");
    await new Promise((r) => platform.once("exit", r));
    platform = startPlatform(env);
    const withBackup = await until("the interrupted snapshot to complete", async () => {
      const { json } = await api(base, "GET", `/v1/databases/${created.json.id}`, user.token);
      const cmd = json?.commands?.find((c: { id: string }) => c.id === backup.json.command_id);
      return cmd?.status === "succeeded" ? json : undefined;
    });
    const snap = withBackup.backups.find((b: { label: string | null }) => b.label === "interrupted");
    assert.ok(snap && snap.status === "complete" && snap.size_bytes > 0, JSON.stringify(withBackup.backups));

    const stop = await api(base, "POST", `/v1/databases/${created.json.id}/stop`, user.token);
    assert.equal(stop.status, 202);
    platform.kill("SIGKILL"); // mid-stop
    await new Promise((r) => platform.once("exit", r));
    platform = startPlatform(env);
    await until("paused after restart", async () => {
      const { json } = await api(base, "GET", `/v1/databases/${created.json.id}`, user.token);
      return json?.state === "paused" ? true : undefined;
    });
    await assert.rejects(async () => {
      const c = new pg.Client({
        connectionString: created.json.database_url.replace("?sslmode=require", ""),
        ssl: { rejectUnauthorized: false },
        connectionTimeoutMillis: 3000,
      });
      c.on("error", () => {});
      await c.connect();
    });
    assert.equal((await api(base, "POST", `/v1/databases/${created.json.id}/start`, user.token)).status, 202);
    await until("running again", async () =>
      (await api(base, "GET", `/v1/databases/${created.json.id}`, user.token)).json?.state === "running"
        ? true
        : undefined,
    );
    const again = new pg.Client({
      connectionString: created.json.database_url.replace("?sslmode=require", ""),
      ssl: { rejectUnauthorized: false },
    });
    await again.connect();
    assert.equal((await again.query("SELECT v FROM survived")).rows[0].v, 42, "nothing lost across two kills");
    await again.end();
  } finally {
    platform.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    const provider = new LocalDatabaseProvider({ dataDir });
    for (const id of ids) await provider.purge(id).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
  }
});
