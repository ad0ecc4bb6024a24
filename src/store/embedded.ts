import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { pgBinaries } from "../pgserver/binaries.js";
import { postgresRunAs } from "../pgserver/system-user.js";
import {
  type Cluster,
  ensureTraversable,
  freePort,
  initCluster,
  isRunning,
  portInUse,
  readPlatformConf,
  startCluster,
  stopCluster,
  writePlatformConf,
} from "../pgserver/cluster.js";

export const CONTROL_PG_MAJOR = 17;

export interface EmbeddedServer {
  url: string;
  adminUrl: (database: string) => string;
  stop: () => Promise<void>;
}

/**
 * The control plane's own PostgreSQL, used when DATABASE_URL is unset: initialised under
 * $DATA_DIR/control on first start, adopted if it is still running after a crash.
 */
export async function startEmbeddedServer(
  dataDir: string,
  database = "platform",
  opts: { maxConnections?: number; fsync?: boolean } = {},
): Promise<EmbeddedServer> {
  const root = path.join(dataDir, "control");
  const runAs = postgresRunAs();
  await ensureTraversable(dataDir, runAs);
  const cluster: Cluster = {
    bins: pgBinaries(CONTROL_PG_MAJOR),
    dataDir: path.join(root, "pgdata"),
    logFile: path.join(root, "logs", "server.log"),
    runAs,
  };
  const passwordFile = path.join(root, "superuser-password");
  let password: string;
  if (existsSync(passwordFile) && existsSync(path.join(cluster.dataDir, "PG_VERSION"))) {
    password = (await readFile(passwordFile, "utf8")).trim();
  } else {
    password = randomBytes(24).toString("hex");
    await initCluster(cluster, { superuser: "postgres", password });
    await writeFile(passwordFile, password + "\n", { mode: 0o600 });
  }

  let port = Number((await readPlatformConf(cluster)).port) || 0;
  if (!(await isRunning(cluster))) {
    if (!port || (await portInUse(port))) port = await freePort();
    await writePlatformConf(cluster, {
      port,
      listen_addresses: "127.0.0.1",
      // a Unix socket in the data directory (only the platform's user and PostgreSQL's reach it): cheaper than TCP
      // loopback for every query; TCP stays for tools and for paths too long for a socket address
      unix_socket_directories: socketDirFits(cluster.dataDir) ? cluster.dataDir : "",
      max_connections: opts.maxConnections ?? 200,
      shared_buffers: "128MB",
      // off only for a throw-away server (the test run's): it still survives a killed process, not an OS crash
      fsync: opts.fsync === false ? "off" : "on",
    });
    await startCluster(cluster);
  }
  const socket = path.join(cluster.dataDir, `.s.PGSQL.${port}`);
  const host = existsSync(socket) ? encodeURIComponent(cluster.dataDir) : "127.0.0.1";
  const adminUrl = (db: string) => `postgres://postgres:${password}@${host}:${port}/${db}`;
  await ensureDatabase(adminUrl("postgres"), database);
  return { url: adminUrl(database), adminUrl, stop: () => stopCluster(cluster, "fast") };
}

/** Whether `<dir>/.s.PGSQL.<port>` fits a Unix socket address (108 bytes on Linux, with its terminating NUL). */
const socketDirFits = (dir: string) => Buffer.byteLength(path.join(dir, ".s.PGSQL.65535")) < 108;

export async function ensureDatabase(adminUrl: string, database: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount) return;
    const ident = pg.escapeIdentifier(database);
    await client.query(
      template ? `CREATE DATABASE ${ident} TEMPLATE ${pg.escapeIdentifier(template)}` : `CREATE DATABASE ${ident}`,
    );
  } catch (err) {
    if ((err as { code?: string }).code !== "42P04") throw err; // created concurrently
  } finally {
    await client.end();
  }
}
