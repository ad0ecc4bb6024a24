import { execFile } from "node:child_process";
import { chmod, chown, rename, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import type { RunAs } from "../../../pgserver/system-user.js";

const run = promisify(execFile);

/** Runs a helper binary, optionally as the servers' unprivileged user. */
export async function execAs(
  runAs: RunAs | null,
  file: string,
  args: string[],
  opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
) {
  return run(file, args, {
    uid: runAs?.uid,
    gid: runAs?.gid,
    timeout: opts.timeoutMs ?? 60_000,
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C", TZ: "UTC", HOME: "/tmp", ...opts.env },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Servers refuse config and key files they cannot own, so everything they read is written as theirs.
 * Write-then-rename: a kill mid-write never leaves a truncated pg_hba.conf, and the new inode makes
 * PgBouncer re-read its auth_file (it skips files whose stat, mtime in whole seconds, looks unchanged).
 */
export async function writeOwnedFile(
  file: string,
  content: string | Buffer,
  runAs: RunAs | null,
  mode = 0o600,
): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, content, { mode });
  await chmod(tmp, mode);
  if (runAs) await chown(tmp, runAs.uid, runAs.gid);
  await rename(tmp, file);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `check` returns a value other than undefined, or throws `onTimeout()`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  onTimeout: () => Error,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw onTimeout();
    await sleep(intervalMs);
  }
}
