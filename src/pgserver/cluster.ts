import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, chown, mkdir, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import type { PgBinaries } from "./binaries.js";
import type { RunAs } from "./system-user.js";
import { freePort } from "../kernel/free-port.js";

export { freePort };

const run = promisify(execFile);

/** One PostgreSQL data directory and how to run it: the building block of the control store and of managed instances. */
export interface Cluster {
  bins: PgBinaries;
  dataDir: string;
  logFile: string;
  runAs: RunAs | null;
}

export const PLATFORM_CONF = "platform.conf";

const serverEnv = (cluster: Cluster) => ({
  PATH: `${cluster.bins.binDir}:/usr/bin:/bin`,
  LC_ALL: "C",
  TZ: "UTC",
  HOME: "/tmp",
});

async function exec(cluster: Cluster, file: string, args: string[], timeoutMs = 120_000) {
  return run(file, args, {
    uid: cluster.runAs?.uid,
    gid: cluster.runAs?.gid,
    timeout: timeoutMs,
    env: serverEnv(cluster),
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

/**
 * Starts the server as a daemon of its own (its own session, like `pg_ctl start`), so it outlives a killed platform
 * process and is adopted on restart. Spawned directly rather than through `pg_ctl start -w`, whose readiness check
 * sleeps in 100 ms steps: this one reads postmaster.pid every 10 ms until the server says it accepts connections
 * ("ready", or "standby" for a hot standby), and fails at once with the log's tail when the server exits.
 */
export async function startCluster(cluster: Cluster, timeoutSec = 60): Promise<void> {
  if (await isRunning(cluster)) return;
  await ownedDir(path.dirname(cluster.logFile), cluster.runAs, 0o755);
  const logFd = await open(cluster.logFile, "a", 0o600);
  let child: ChildProcess;
  try {
    if (cluster.runAs) await logFd.chown(cluster.runAs.uid, cluster.runAs.gid);
    child = spawn(cluster.bins.postgres, ["-D", cluster.dataDir], {
      detached: true,
      stdio: ["ignore", logFd.fd, logFd.fd],
      uid: cluster.runAs?.uid,
      gid: cluster.runAs?.gid,
      env: serverEnv(cluster),
    });
  } finally {
    await logFd.close();
  }
  const failed = async (why: string) => {
    const tail = await readFile(cluster.logFile, "utf8").then(
      (t) => t.trim().split("\n").slice(-5).join(" | "),
      () => "",
    );
    return new Error(`PostgreSQL in ${cluster.dataDir} did not start: ${tail || why}`);
  };
  let exited: string | null = null;
  child.once("error", (err) => (exited ??= err.message));
  child.once("exit", (code, signal) => (exited ??= `exited with ${signal ?? code}`));
  const deadline = Date.now() + timeoutSec * 1000;
  try {
    for (;;) {
      if (exited !== null) throw await failed(exited);
      const pidFile = await readFile(path.join(cluster.dataDir, "postmaster.pid"), "utf8").catch(() => "");
      const lines = pidFile.split("\n");
      // line 1 the postmaster's pid (ours, not a stale file's), line 8 its status once it has one
      if (Number(lines[0]) === child.pid && (lines[7]?.trim() === "ready" || lines[7]?.trim() === "standby")) return;
      // as with pg_ctl -w, a server slower than the timeout is left to finish starting
      if (Date.now() > deadline) throw await failed(`not ready after ${timeoutSec} s`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.unref();
  }
}

export async function stopCluster(cluster: Cluster, mode: "smart" | "fast" | "immediate" = "fast"): Promise<void> {
  if (!(await isRunning(cluster))) return;
  await exec(cluster, cluster.bins.pgCtl, ["stop", "-D", cluster.dataDir, "-m", mode, "-w", "-t", "60", "-s"], 70_000);
}

export async function reloadCluster(cluster: Cluster): Promise<void> {
  await exec(cluster, cluster.bins.pgCtl, ["reload", "-D", cluster.dataDir, "-s"]);
}

/**
 * What `pg_ctl status` checks, without starting a process for it: postmaster.pid names a live process. (Node reaps
 * the servers it spawned, so a stopped one is never a zombie that would still answer the signal.)
 */
export async function isRunning(cluster: Cluster): Promise<boolean> {
  const pidFile = await readFile(path.join(cluster.dataDir, "postmaster.pid"), "utf8").catch(() => null);
  if (pidFile === null) return false;
  const pid = Math.abs(Number(pidFile.split("\n")[0]));
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
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

/** Whether the user may pass through a directory (its execute bit for owner, group or others, whichever the user is). */
export function mayPass(dir: { uid: number; gid: number; mode: number }, user: RunAs): boolean {
  const bit = dir.uid === user.uid ? 0o100 : dir.gid === user.gid ? 0o010 : 0o001;
  return (dir.mode & bit) !== 0;
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
    if (!mayPass(await stat(dir), runAs))
      throw new Error(
        `DATA_DIR ${ownDir} is not reachable by the PostgreSQL user ${runAs.name}: ${dir} does not let others pass (chmod o+x ${dir}, or choose another DATA_DIR)`,
      );
    if (dir === path.dirname(dir)) break;
  }
}
