import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { ownedDir, portInUse } from "../../../pgserver/cluster.js";
import type { RunAs } from "../../../pgserver/system-user.js";
import { ProviderError } from "../types.js";
import { execAs, sleep, waitFor, writeOwnedFile } from "./exec.js";
import { ADMIN_ROLE, POOL_ADMIN_ROLE, REPLICATION_ROLE } from "./record.js";

/**
 * Transaction-mode PgBouncer in front of an instance, a daemon of its own (like the servers, it
 * outlives the platform process). It reaches the primary through the instance's Unix socket on the
 * front port, so it follows a switchover without reconfiguration, and it enforces the customer's
 * allowlist itself (the server only sees the socket). Clients authenticate with SCRAM against the
 * server's own verifiers copied into the userlist; PgBouncer then logs in to the server with the
 * keys from that exchange (SCRAM pass-through), so it never stores a password.
 */

const CANDIDATES = [
  "/usr/sbin/pgbouncer",
  "/usr/bin/pgbouncer",
  "/usr/local/bin/pgbouncer",
  "/usr/local/sbin/pgbouncer",
];

export function findPgbouncer(explicit?: string | null): string | null {
  if (explicit) return existsSync(explicit) ? explicit : null;
  const fromPath = (process.env.PATH ?? "")
    .split(":")
    .filter(Boolean)
    .map((d) => path.join(d, "pgbouncer"));
  return [...CANDIDATES, ...fromPath].find((p) => existsSync(p)) ?? null;
}

export function requirePgbouncer(explicit?: string | null): string {
  const bin = findPgbouncer(explicit);
  if (!bin) {
    throw new ProviderError(
      "pgbouncer_missing",
      "connection pooling is not available on this host: PgBouncer is not installed (Debian/Ubuntu: apt-get install pgbouncer)",
    );
  }
  return bin;
}

export interface PoolConfig {
  dir: string;
  listenPort: number;
  serverSocketDir: string;
  serverPort: number;
  certFile: string;
  keyFile: string;
  poolSize: number;
  maxClients: number;
}

const files = (dir: string) => ({
  ini: path.join(dir, "pgbouncer.ini"),
  users: path.join(dir, "userlist.txt"),
  hba: path.join(dir, "hba.conf"),
  pid: path.join(dir, "pgbouncer.pid"),
  log: path.join(dir, "pgbouncer.log"),
});

export function renderPoolIni(c: PoolConfig): string {
  const f = files(c.dir);
  return `# written by the platform; edits are overwritten
[databases]
* = host=${c.serverSocketDir} port=${c.serverPort}

[pgbouncer]
listen_addr = *
listen_port = ${c.listenPort}
unix_socket_dir =
pool_mode = transaction
auth_type = hba
auth_hba_file = ${f.hba}
auth_file = ${f.users}
max_client_conn = ${c.maxClients}
default_pool_size = ${c.poolSize}
client_tls_sslmode = require
client_tls_cert_file = ${c.certFile}
client_tls_key_file = ${c.keyFile}
ignore_startup_parameters = extra_float_digits,options
admin_users = ${POOL_ADMIN_ROLE}
logfile = ${f.log}
pidfile = ${f.pid}
`;
}

/** Login roles with their SCRAM verifiers, straight from the server's catalog, plus the console user. */
export async function renderUserlist(admin: pg.Client, poolAdminPassword: string): Promise<string> {
  const res = await admin.query<{ rolname: string; rolpassword: string }>(
    `SELECT rolname, rolpassword FROM pg_authid
      WHERE rolcanlogin AND rolpassword IS NOT NULL AND rolname NOT IN ($1, $2) ORDER BY rolname`,
    [ADMIN_ROLE, REPLICATION_ROLE],
  );
  const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const lines = res.rows.map((r) => `${q(r.rolname)} ${q(r.rolpassword)}`);
  lines.push(`${q(POOL_ADMIN_ROLE)} ${q(poolAdminPassword)}`);
  return lines.join("\n") + "\n";
}

export async function writePoolFiles(c: PoolConfig, userlist: string, hba: string, runAs: RunAs | null): Promise<void> {
  await ownedDir(c.dir, runAs);
  const f = files(c.dir);
  await writeOwnedFile(f.ini, renderPoolIni(c), runAs);
  await writeOwnedFile(f.users, userlist, runAs);
  await writeOwnedFile(f.hba, hba, runAs);
}

export async function poolPid(dir: string): Promise<number | null> {
  const text = await readFile(files(dir).pid, "utf8").catch(() => "");
  const pid = Number(text.trim());
  if (!pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

export async function startPool(bin: string, c: PoolConfig, runAs: RunAs | null): Promise<void> {
  if (await poolPid(c.dir)) return;
  await rm(files(c.dir).pid, { force: true });
  // a wake front of another process of this host gives the port up shortly (lifecycle.ts startNode)
  await waitFor(
    async () => ((await portInUse(c.listenPort)) ? undefined : true),
    5_000,
    () => new ProviderError("port_taken", `pool port ${c.listenPort} is taken by another process`),
    100,
  );
  // -d: daemonize, so the pooler is nobody's child and survives the platform
  await execAs(runAs, bin, ["-d", "-q", files(c.dir).ini]).catch(async (err) => {
    throw new Error(`PgBouncer did not start: ${(await logTail(c.dir)) || (err as Error).message}`);
  });
  // PgBouncer may listen before its daemonised child has written the pid file: ready means both
  await waitFor(
    async () => ((await portInUse(c.listenPort)) && (await poolPid(c.dir)) !== null ? true : undefined),
    10_000,
    () => new Error(`PgBouncer did not open port ${c.listenPort}`),
    50,
  );
}

/** A session on the pooler's admin console (simple query protocol only, like the console itself). */
async function withConsole<T>(port: number, poolAdminPassword: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const adminConsole = new pg.Client({
    host: "127.0.0.1",
    port,
    user: POOL_ADMIN_ROLE,
    password: poolAdminPassword,
    database: "pgbouncer",
    ssl: { rejectUnauthorized: false },
    connectionTimeoutMillis: 10_000,
  });
  adminConsole.on("error", () => {});
  await adminConsole.connect();
  try {
    return await fn(adminConsole);
  } finally {
    await adminConsole.end().catch(() => {});
  }
}

/**
 * RELOAD on the admin console: re-reads ini, userlist and hba without dropping clients, and unlike
 * SIGHUP it has happened when the call returns (a client connecting next already meets new passwords).
 */
export async function reloadPool(dir: string, port: number, poolAdminPassword: string): Promise<void> {
  if (!(await poolPid(dir))) return;
  await withConsole(port, poolAdminPassword, (c) => c.query("RELOAD"));
}

/**
 * Whether the pooler has a pool for `role`: it creates one at a client's startup packet, before
 * authentication, and keeps it after the clients leave. So after a RELOAD, "no" means no session or
 * login of the role that began before the reload exists in it.
 */
export async function poolHasRole(
  dir: string,
  port: number,
  poolAdminPassword: string,
  role: string,
): Promise<boolean> {
  if (!(await poolPid(dir))) return false;
  const pools = await withConsole(port, poolAdminPassword, (c) =>
    c.query<{ database: string; user: string }>("SHOW POOLS"),
  );
  return pools.rows.some((p) => p.user === role && p.database !== "pgbouncer");
}

/**
 * The pooler's customer clients (its console's own session left out) and the server backends it holds (their
 * pids): the idle sweep counts the clients and leaves those backends out of the server's sessions.
 */
export async function poolSessions(
  dir: string,
  port: number,
  poolAdminPassword: string,
): Promise<{ clients: number; serverPids: number[] }> {
  if (!(await poolPid(dir))) return { clients: 0, serverPids: [] };
  return withConsole(port, poolAdminPassword, async (c) => {
    const clients = await c.query<{ database: string }>("SHOW CLIENTS");
    const servers = await c.query<{ remote_pid: string | number }>("SHOW SERVERS");
    return {
      clients: clients.rows.filter((r) => r.database !== "pgbouncer").length,
      serverPids: servers.rows.map((r) => Number(r.remote_pid)).filter((n) => n > 0),
    };
  });
}

export async function stopPool(dir: string): Promise<void> {
  const pid = await poolPid(dir);
  if (!pid) return;
  process.kill(pid, "SIGTERM"); // immediate shutdown: clients are cut like the server's fast stop
  for (let i = 0; i < 100; i++) {
    if (!(await poolPid(dir))) return;
    await sleep(50);
  }
  process.kill(pid, "SIGKILL");
}

async function logTail(dir: string): Promise<string> {
  const text = await readFile(files(dir).log, "utf8").catch(() => "");
  return text.trim().split("\n").slice(-3).join(" | ");
}
