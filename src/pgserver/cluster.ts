import { execFile } from "node:child_process";
import { chmod, chown, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import type { PgBinaries } from "./binaries.js";
import type { RunAs } from "./system-user.js";

const run = promisify(execFile);

/** One PostgreSQL data directory and how to run it: the building block of the control store and of managed instances. */
export interface Cluster {
  bins: PgBinaries;
  dataDir: string;
  logFile: string;
  runAs: RunAs | null;
}

export const PLATFORM_CONF = "platform.conf";

async function exec(cluster: Cluster, file: string, args: string[], timeoutMs = 120_000) {
  return run(file, args, {
    uid: cluster.runAs?.uid,
    gid: cluster.runAs?.gid,
    timeout: timeoutMs,
    env: { PATH: `${cluster.bins.binDir}:/usr/bin:/bin`, LC_ALL: "C", TZ: "UTC", HOME: "/tmp" },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** Creates a directory owned by the server's user. */
export async function ownedDir(dir: string, runAs: RunAs | null, mode = 0o700): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, mode);
  if (runAs) await chown(dir, runAs.uid, runAs.gid);
}

export interface InitOptions {
  superuser: string;
  password: string;
}

/** initdb with checksums and password auth; a half-initialised directory from a crash is wiped first. */
export async function initCluster(cluster: Cluster, opts: InitOptions): Promise<void> {
  if (existsSync(path.join(cluster.dataDir, "PG_VERSION")) && existsSync(path.join(cluster.dataDir, PLATFORM_CONF)))
    return;
  await rm(cluster.dataDir, { recursive: true, force: true });
  const parent = path.dirname(cluster.dataDir);
  await ownedDir(parent, cluster.runAs);
  await ownedDir(cluster.dataDir, cluster.runAs);
  const pwfile = path.join(parent, `.pwfile-${process.pid}-${Date.now()}`);
  await writeFile(pwfile, opts.password + "\n", { mode: 0o600 });
  if (cluster.runAs) await chown(pwfile, cluster.runAs.uid, cluster.runAs.gid);
  try {
    await exec(cluster, cluster.bins.initdb, [
      "-D",
      cluster.dataDir,
      "-U",
      opts.superuser,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      "--locale=C",
      "--data-checksums",
      "--no-sync",
    ]);
  } finally {
    await rm(pwfile, { force: true });
  }
  const conf = path.join(cluster.dataDir, "postgresql.conf");
  const base = await readFile(conf, "utf8");
  await writeFile(conf, `${base}\ninclude_if_exists '${PLATFORM_CONF}'\n`);
  await writePlatformConf(cluster, {});
}

/** Settings owned by the platform live in one included file, rewritten whole. */
export async function writePlatformConf(
  cluster: Cluster,
  settings: Record<string, string | number | boolean>,
): Promise<void> {
  const lines = Object.entries(settings).map(
    ([k, v]) => `${k} = ${typeof v === "string" ? `'${v.replace(/'/g, "''")}'` : v}`,
  );
  const file = path.join(cluster.dataDir, PLATFORM_CONF);
  await writeFile(file, `# written by the platform; edits are overwritten\n${lines.join("\n")}\n`, { mode: 0o600 });
  if (cluster.runAs) await chown(file, cluster.runAs.uid, cluster.runAs.gid);
}

export async function readPlatformConf(cluster: Cluster): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  try {
    const text = await readFile(path.join(cluster.dataDir, PLATFORM_CONF), "utf8");
    for (const line of text.split("\n")) {
      const m = /^\s*([a-z_]+)\s*=\s*'?(.*?)'?\s*$/.exec(line);
      if (m) out[m[1]] = m[2].replace(/''/g, "'");
    }
  } catch {
    // not initialised yet
  }
  return out;
}

/** pg_ctl start: the server is a daemon of its own, so it outlives a killed platform process and is adopted on restart. */
export async function startCluster(cluster: Cluster, timeoutSec = 60): Promise<void> {
  if (await isRunning(cluster)) return;
  await ownedDir(path.dirname(cluster.logFile), cluster.runAs, 0o755);
  try {
    await exec(
      cluster,
      cluster.bins.pgCtl,
      ["start", "-D", cluster.dataDir, "-l", cluster.logFile, "-w", "-t", String(timeoutSec), "-s"],
      (timeoutSec + 10) * 1000,
    );
  } catch (err) {
    const tail = await readFile(cluster.logFile, "utf8").then(
      (t) => t.trim().split("\n").slice(-5).join(" | "),
      () => "",
    );
    throw new Error(`PostgreSQL in ${cluster.dataDir} did not start: ${tail || (err as Error).message}`, {
      cause: err,
    });
  }
}

export async function stopCluster(cluster: Cluster, mode: "smart" | "fast" | "immediate" = "fast"): Promise<void> {
  if (!(await isRunning(cluster))) return;
  await exec(cluster, cluster.bins.pgCtl, ["stop", "-D", cluster.dataDir, "-m", mode, "-w", "-t", "60", "-s"], 70_000);
}

export async function reloadCluster(cluster: Cluster): Promise<void> {
  await exec(cluster, cluster.bins.pgCtl, ["reload", "-D", cluster.dataDir, "-s"]);
}

export async function isRunning(cluster: Cluster): Promise<boolean> {
  if (!existsSync(path.join(cluster.dataDir, "PG_VERSION"))) return false;
  try {
    await exec(cluster, cluster.bins.pgCtl, ["status", "-D", cluster.dataDir]);
    return true;
  } catch {
    return false;
  }
}

/** A loopback port nobody listens on right now. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, host, () => {
      const addr = srv.address() as net.AddressInfo;
      srv.close(() => resolve(addr.port));
    });
  });
}

export async function portInUse(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => resolve(false));
  });
}

/**
 * The server's user must be able to walk down to its data. The platform's own data directory is
 * opened for traversal (o+x, never listing); an ancestor it cannot pass is a clear start-up error.
 */
export async function ensureTraversable(ownDir: string, runAs: RunAs | null): Promise<void> {
  await mkdir(ownDir, { recursive: true });
  if (!runAs) return;
  const own = await stat(ownDir);
  if ((own.mode & 0o001) === 0) await chmod(ownDir, (own.mode & 0o777) | 0o001);
  for (let dir = path.dirname(ownDir); ; dir = path.dirname(dir)) {
    const s = await stat(dir);
    const passable =
      s.uid === runAs.uid
        ? (s.mode & 0o100) !== 0
        : s.gid === runAs.gid
          ? (s.mode & 0o010) !== 0
          : (s.mode & 0o001) !== 0;
    if (!passable)
      throw new Error(
        `DATA_DIR ${ownDir} is not reachable by the PostgreSQL user ${runAs.name}: ${dir} does not let others pass (chmod o+x ${dir}, or choose another DATA_DIR)`,
      );
    if (dir === path.dirname(dir)) break;
  }
}
