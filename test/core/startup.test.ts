import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import path from "node:path";
import { tmpdir } from "node:os";
import pg from "pg";
import { loadConfig, ConfigError } from "../../src/config/config.js";
import { createPool } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { freePort } from "../../src/pgserver/cluster.js";
import { freshDatabase } from "../helpers/app.js";

const MAIN = path.resolve("src/main.ts");
const TSX = path.resolve("node_modules/.bin/tsx");

function startServer(env: Record<string, string>) {
  const child = spawn(TSX, [MAIN], {
    // default ports may be taken by another platform on this machine, which stops start-up (exit 2)
    env: { PATH: process.env.PATH!, LOG_LEVEL: "info", EDGE_PORT: "0", REGISTRY_PORT: "0", S3_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => out, errors: () => err };
}

async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer`);
}

describe("configuration", () => {
  test("bad settings throw a ConfigError naming the variable", () => {
    for (const [name, value] of [
      ["PORT", "eighty"],
      ["SIGNUP", "maybe"],
      ["DATABASE_URL", "mysql://x"],
      ["REDIS_URL", "::"],
      ["OPERATOR_TOKEN", "short"],
      ["RATE_LIMIT_RPS", "0"],
    ]) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (e: Error) => e instanceof ConfigError && e.message.includes(name),
        name,
      );
    }
    const defaults = loadConfig({});
    assert.equal(defaults.port, 8080);
    assert.equal(defaults.host, "127.0.0.1");
    assert.equal(defaults.signup, "open");
    assert.equal(defaults.rateLimitRps, 100);
  });

  test("the service refuses to start on bad configuration with one line naming the variable", async () => {
    const s = startServer({ PORT: "not-a-port" });
    const code = await s.exited;
    assert.equal(code, 2);
    const lines = s
      .errors()
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("npm warn"));
    assert.equal(lines.length, 1, s.errors());
    assert.match(lines[0], /PORT/);
  });
});

describe("migrations", () => {
  test("two processes migrating one empty database at once apply each file exactly once", async () => {
    const admin = new pg.Client({ connectionString: process.env.TEST_ADMIN_URL });
    await admin.connect();
    const name = `m_${Date.now()}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const url = process.env.TEST_ADMIN_URL!.replace(/\/postgres$/, `/${name}`);
    const a = createPool(url, 2);
    const b = createPool(url, 2);
    try {
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      assert.ok(ra.length > 0 || rb.length > 0);
      assert.equal(ra.length + rb.length, new Set([...ra, ...rb]).size, "no file applied twice");
      const { rows } = await a.query("SELECT version FROM schema_migrations");
      assert.equal(rows.length, ra.length + rb.length);
      assert.deepEqual(await migrate(a), [], "a later start applies nothing");
    } finally {
      await a.end();
      await b.end();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe("process lifecycle", () => {
  test("with DATABASE_URL: serves, finishes an in-flight request on SIGTERM, then exits 0", async () => {
    const database = await freshDatabase();
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(tmpdir(), "platform-"));
    const s = startServer({
      DATABASE_URL: database.url,
      PORT: String(port),
      DATA_DIR: dataDir,
      OPERATOR_TOKEN: "operator-token-for-this-test",
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/v1/edition`);
      const inflight = fetch(`http://127.0.0.1:${port}/v1/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "late@example.com", password: "long enough pw" }),
      });
      // SIGTERM once the server has the request (a fixed pause is too short while the forked edge starts beside it)
      const deadline = Date.now() + 10_000;
      while (!/"url":"\/v1\/auth\/signup"[^\n]*"incoming request"/.test(s.output()) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 2));
      s.child.kill("SIGTERM");
      const res = await inflight;
      assert.equal(res.status, 201);
      assert.equal(await s.exited, 0);
      assert.match(s.output(), /stopped/);
    } finally {
      s.child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    }
  });

  test("without DATABASE_URL: runs its own PostgreSQL, writes the operator token 0600, stops the server on SIGTERM", async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(tmpdir(), "platform-embedded-"));
    const s = startServer({ PORT: String(port), DATA_DIR: dataDir });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/v1/edition`, 120_000);
      const signup = await fetch(`http://127.0.0.1:${port}/v1/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "e@example.com", password: "long enough pw" }),
      });
      assert.equal(signup.status, 201);
      const tokenFile = path.join(dataDir, "operator-token");
      assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
      assert.match(s.output(), /operator-token/);
      s.child.kill("SIGTERM");
      assert.equal(await s.exited, 0);
      const pidFile = path.join(dataDir, "control", "pgdata", "postmaster.pid");
      assert.throws(() => statSync(pidFile), "the embedded server stopped and removed its pid file");
    } finally {
      s.child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  test("a port already in use stops start-up with exit 2 and a line naming the variable, also in the forked edge", async () => {
    const database = await freshDatabase();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = String((taken.address() as AddressInfo).port);
    const dataDir = mkdtempSync(path.join(tmpdir(), "platform-taken-"));
    const base = { DATABASE_URL: database.url, DATA_DIR: dataDir, OPERATOR_TOKEN: "operator-token-for-this-test" };
    try {
      // EDGE_TLS_PORT: bound by the forked edge process, whose failure its parent reports instead of restarting it
      for (const variable of ["EDGE_TLS_PORT", "S3_PORT"]) {
        const free = String(await freePort());
        const s = startServer({ ...base, PORT: free, [variable]: port });
        assert.equal(await s.exited, 2, s.errors());
        assert.match(s.errors(), new RegExp(`${variable} ${port} is in use: set ${variable} to a free port`));
        assert.doesNotMatch(s.output(), /restarting/);
      }
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    }
  });
});
