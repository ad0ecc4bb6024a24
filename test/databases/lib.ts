import assert from "node:assert/strict";
import net from "node:net";
import pg from "pg";
import { OPERATOR_TOKEN, call, type TestApp } from "../helpers/app.js";

/** Connects with a URL as the API gave it (password put in by the caller); the certificate is self-signed, so it is not verified. */
export async function connect(url: string, opts: { from?: string; password?: string } = {}): Promise<pg.Client> {
  const u = new URL(url);
  let stream: (() => net.Socket) | undefined;
  if (opts.from) {
    stream = () => {
      const sock = new net.Socket();
      const original = sock.connect.bind(sock) as (o: net.TcpSocketConnectOpts) => net.Socket;
      (sock as unknown as { connect: (port: number, host: string) => net.Socket }).connect = (port, host) =>
        original({ port, host, localAddress: opts.from });
      return sock;
    };
  }
  assert.equal(u.searchParams.get("sslmode"), "require");
  const client = new pg.Client({
    host: u.hostname,
    port: Number(u.port),
    user: decodeURIComponent(u.username),
    password: opts.password ?? decodeURIComponent(u.password),
    database: u.pathname.slice(1),
    ssl: { rejectUnauthorized: false },
    stream,
    connectionTimeoutMillis: 10_000,
  });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  return client;
}

/** One query on a fresh connection. */
export async function query<T extends pg.QueryResultRow = any>(
  url: string,
  sql: string,
  params: unknown[] = [],
  password?: string,
): Promise<T[]> {
  const c = await connect(url, { password });
  try {
    return (await c.query<T>(sql, params)).rows;
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
    (d) => ["succeeded", "failed"].includes(d.commands?.find((c: any) => c.id === commandId)?.status),
    timeoutMs,
  );
  const cmd = db.commands.find((c: any) => c.id === commandId);
  assert.equal(cmd.status, "succeeded", `command ${cmd.kind} failed: ${cmd.error}`);
  return db;
}

/** The error a connection attempt ends with, or null when it connects. */
export async function connectError(url: string, password?: string): Promise<Error | null> {
  try {
    const c = await connect(url, { password });
    await c.query("SELECT 1");
    await c.end();
    return null;
  } catch (err) {
    return err as Error;
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
