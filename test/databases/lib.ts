import assert from "node:assert/strict";
import net from "node:net";
import pg from "pg";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { isProviderError, type InstanceSpec } from "../../src/databases/provider/types.js";
import { OPERATOR_TOKEN, call, type TestApp } from "../helpers/app.js";

/**
 * A server addressed by port on loopback, as the provider tests reach it (they drive the provider without the API,
 * so there is no URL); TLS unless `ssl` is false.
 */
export interface ConnectOpts {
  port: number;
  user: string;
  password: string;
  database: string;
  ssl?: boolean;
  /** Source address of the TCP connection (node-postgres has no option for it: a pre-made socket does it). */
  from?: string;
}

/**
 * A client for a URL as the API gave it (password put in by the caller), or for a server by port; the certificate
 * is self-signed, so it is not verified.
 */
function client(
  target: string | ConnectOpts,
  opts: { from?: string; password?: string; timeoutMs?: number } = {},
): pg.Client {
  let o: ConnectOpts & { host: string };
  if (typeof target === "string") {
    const u = new URL(target);
    assert.equal(u.searchParams.get("sslmode"), "require");
    o = {
      host: u.hostname,
      port: Number(u.port),
      user: decodeURIComponent(u.username),
      password: opts.password ?? decodeURIComponent(u.password),
      database: u.pathname.slice(1),
      from: opts.from,
    };
  } else o = { host: "127.0.0.1", ...target };
  let stream: (() => net.Socket) | undefined;
  if (o.from) {
    const from = o.from;
    stream = () => {
      const sock = new net.Socket();
      const original = sock.connect.bind(sock) as (o: net.TcpSocketConnectOpts) => net.Socket;
      (sock as unknown as { connect: (port: number, host: string) => net.Socket }).connect = (port, host) =>
        original({ port, host, localAddress: from });
      return sock;
    };
  }
  const c = new pg.Client({
    host: o.host,
    port: o.port,
    user: o.user,
    password: o.password,
    database: o.database,
    ssl: o.ssl === false ? false : { rejectUnauthorized: false },
    stream,
    connectionTimeoutMillis: opts.timeoutMs ?? 10_000,
  });
  c.on("error", () => {}); // terminated sessions surface through the failing query instead
  return c;
}

/** The instance the local-provider test files provision (each in its own temporary provider). */
export function mainSpec(): InstanceSpec {
  return {
    id: "main-db",
    version: 17,
    size: "basic",
    storageGb: 10,
    database: "shop",
    user: "shop_owner",
    password: "first-password-1",
    superuserPassword: "super-password-1",
    hostnames: ["shop.db.example.test"],
  };
}

/** Connection options for the owner and the superuser of `spec`; port and owner password are read when called (tests change them). */
export function rolesOf(spec: InstanceSpec, port: () => number, ownerPassword: () => string) {
  const as = (user: string, password: string, extra: Partial<ConnectOpts>): ConnectOpts => ({
    port: port(),
    user,
    password,
    database: spec.database,
    ...extra,
  });
  return {
    owner: (extra: Partial<ConnectOpts> = {}) => as(spec.user, ownerPassword(), extra),
    superuser: (extra: Partial<ConnectOpts> = {}) => as("postgres", spec.superuserPassword, extra),
  };
}

export async function connect(
  target: string | ConnectOpts,
  opts: { from?: string; password?: string; timeoutMs?: number } = {},
): Promise<pg.Client> {
  const c = client(target, opts);
  try {
    await c.connect();
  } catch (err) {
    await c.end().catch(() => {});
    throw err;
  }
  return c;
}

/** One query on a fresh connection. */
export async function query<T extends pg.QueryResultRow = any>(
  target: string | ConnectOpts,
  sql: string,
  params: unknown[] = [],
  password?: string,
): Promise<T[]> {
  const c = await connect(target, { password });
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** query() for a connection held while a sleeping database starts: a loaded machine took more than 10 s (CI) */
export async function queryWaking(url: string, sql: string): Promise<any[]> {
  const c = await connect(url, { timeoutMs: 60_000 });
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(
  t: TestApp,
  token: string,
  id: string,
  predicate: (db: any) => boolean,
  timeoutMs = 90_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = (await call(t.app, { url: `/v1/databases/${id}`, token })).json();
    if (predicate(last)) return last;
    await sleep(200);
  }
  throw new Error(`database never reached the expected state: ${JSON.stringify(last).slice(0, 1500)}`);
}

/** Waits until the command finished; fails the test with the command's error when it failed. */
export async function waitCommand(
  t: TestApp,
  token: string,
  id: string,
  commandId: string,
  timeoutMs = 90_000,
): Promise<any> {
  const db = await waitFor(
    t,
    token,
    id,
    // and the row past `creating`: the detail reads the row, then the commands, and can fall between the two
    (d) =>
      ["succeeded", "failed"].includes(d.commands?.find((c: any) => c.id === commandId)?.status) &&
      d.state !== "creating",
    timeoutMs,
  );
  const cmd = db.commands.find((c: any) => c.id === commandId);
  assert.equal(cmd.status, "succeeded", `command ${cmd.kind} failed: ${cmd.error}`);
  return db;
}

/** The error a connection attempt ends with, or null when it connects. */
export async function connectError(target: string | ConnectOpts, password?: string): Promise<Error | null> {
  const c = client(target, { password });
  try {
    await c.connect();
    await c.query("SELECT 1");
    return null;
  } catch (err) {
    return err as Error;
  } finally {
    await c.end().catch(() => {});
  }
}

export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch((e) => e as T);
    if (ok(v) || Date.now() > deadline) return v;
    await sleep(100);
  }
}

/** The same URL on another port (a standby's or a pooler's). */
export function onPort(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}

/**
 * Paid sizes (basic and above) need a funded account: the operator credits it through the API.
 * Where billing is not part of the build (no such route), creation needs no funds and this does nothing.
 */
export async function fund(t: TestApp, accountId: string, amountKrw = 10_000_000): Promise<void> {
  const res = await call(t.app, {
    method: "POST",
    url: `/v1/operator/accounts/${accountId}/credit`,
    token: OPERATOR_TOKEN,
    body: { amount: amountKrw, currency: "KRW", reason: "database tests" },
  });
  if (res.statusCode !== 201 && res.statusCode !== 404)
    throw new Error(`operator credit failed: ${res.statusCode} ${res.body}`);
}

/** Creates a database through the API and waits until it runs; the answer keeps the one-time passwords. */
export async function createRunning(t: TestApp, token: string, body: Record<string, unknown>): Promise<any> {
  const res = await call(t.app, { method: "POST", url: "/v1/databases", token, body });
  assert.equal(res.statusCode, 201, res.body);
  const created = res.json();
  await waitFor(t, token, created.id, (d) => d.state === "running");
  return created;
}

/** The URL with another password in it (after a rotation). */
export const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.password = password;
  return u.toString();
};

// ---------------------------------------------------------------------------------------------
// Tests that drive the local provider directly (provider-local*.test.ts)

/** A LocalDatabaseProvider over a fresh temporary directory; `cleanup` purges every instance in it and removes it. */
export async function tempProvider(): Promise<{
  dataDir: string;
  provider: LocalDatabaseProvider;
  cleanup: () => Promise<void>;
}> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), "provider-local-"));
  await chmod(tmp, 0o755); // the servers run as an unprivileged user that must reach their directories
  const dataDir = path.join(tmp, "data");
  const provider = new LocalDatabaseProvider({ dataDir });
  const cleanup = async () => {
    // a replacement spare may still be written in the background: removing the folder under it fails (ENOTEMPTY)
    await provider.idle();
    const ids = existsSync(path.join(dataDir, "instances")) ? await readdir(path.join(dataDir, "instances")) : [];
    for (const id of ids) await provider.purge(id).catch((e) => console.error(`purge ${id}:`, e));
    await rm(tmp, { recursive: true, force: true });
  };
  return { dataDir, provider, cleanup };
}

export async function expectProviderError(p: Promise<unknown>, code: string): Promise<Error> {
  try {
    await p;
  } catch (err) {
    assert.ok(isProviderError(err), `expected a ProviderError, got ${(err as Error).stack}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ProviderError ${code}, but the call succeeded`);
}

/** Runs provider code in a child process of its own group, so a test can kill -9 it (and its pg_ctl/initdb) mid-way. */
export function runDetached(body: string): { kill: () => Promise<void>; output: () => string } {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `
    import { LocalDatabaseProvider } from ${JSON.stringify(path.resolve("src/databases/provider/local/index.ts"))};
    ${body}
    console.log("finished");`,
    ],
    { detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("exit", r));
  return {
    kill: async () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
      await exited;
    },
    output: () => out,
  };
}
