import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isRunning, startCluster, stopCluster } from "../../../pgserver/cluster.js";
import { ProviderError, type BackupInfo } from "../types.js";
import { restoreBackupFiles } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { waitFor, writeOwnedFile } from "./exec.js";

/**
 * Point-in-time recovery: a stored base backup copied into a fresh data directory, replayed from the
 * WAL archive (restore_command) up to recovery_target_time, then promoted (recovery_target_action).
 */

/** The newest backup finished at or before the target: recovery cannot stop before a backup's end. */
export function chooseBackup(backups: BackupInfo[], targetTime: Date | null): BackupInfo {
  const usable = targetTime ? backups.filter((b) => new Date(b.finishedAt) <= targetTime) : backups;
  const pick = usable[usable.length - 1];
  if (!pick) {
    throw new ProviderError(
      "no_base_backup",
      targetTime
        ? `no base backup finished before ${targetTime.toISOString()}; the earliest recoverable moment is ${backups[0]?.finishedAt ?? "after the first base backup"}`
        : "no base backup exists yet",
    );
  }
  return pick;
}

const TARGET_NOT_REACHED = "recovery ended before configured recovery target was reached";

export class TargetBeyondWal extends Error {}

/**
 * Restores `backup` into the target's primary data directory and replays `sourceArchive`.
 * With hot_standby off, pg_ctl -w returns only once recovery finished and the server promoted.
 */
export async function recoverInto(
  target: InstanceContext,
  backup: BackupInfo,
  sourceArchive: string,
  targetTime: Date | null,
): Promise<number> {
  const node = target.record.primaryNode;
  const cluster = target.cluster(node);
  await stopCluster(cluster, "immediate").catch(() => {});
  await restoreBackupFiles(backup, cluster.dataDir, target.runAs);
  await target.writeNodeConfig(node, {
    kind: "recovery",
    restoreFrom: sourceArchive,
    targetTime: targetTime ? pgTimestamp(targetTime) : null,
  });
  await writeOwnedFile(path.join(cluster.dataDir, "recovery.signal"), "", target.runAs);
  const logStart = await logLength(cluster.logFile);
  const failure = async (fallback: string) => {
    const log = await logSince(cluster.logFile, logStart);
    if (log.includes(TARGET_NOT_REACHED)) return new TargetBeyondWal();
    const fatal = log
      .split("\n")
      .filter((l) => /FATAL|PANIC|invalid value|ERROR/.test(l))
      .slice(-3)
      .join(" | ");
    return new ProviderError("recovery_failed", `recovery did not complete: ${fatal || fallback}`);
  };
  try {
    await startCluster(cluster, 3600);
  } catch (err) {
    throw await failure((err as Error).message);
  }
  // with hot_standby off pg_ctl returns once recovery has *started*; replay ends with promotion or with the server exiting
  await waitFor(
    async () => {
      if (!(await isRunning(cluster))) throw await failure("the server stopped during recovery");
      const inRecovery = await target
        .withPrimary((c) => c.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r"))
        .then(
          (r) => r.rows[0].r,
          () => true,
        ); // "not accepting connections" until promoted
      return inRecovery ? undefined : true;
    },
    6 * 3600_000,
    () => new ProviderError("recovery_failed", "the recovered server did not leave recovery"),
    200,
  );
  // back to a normal primary configuration (own archive, no recovery target); a restart applies it all
  await target.writeNodeConfig(node, { kind: "primary" });
  await stopCluster(cluster, "fast");
  await startCluster(cluster, 300);
  return target
    .withPrimary((c) => c.query<{ f: string }>("SELECT pg_walfile_name(pg_current_wal_lsn()) AS f"))
    .then((r) => parseInt(r.rows[0].f.slice(0, 8), 16));
}

/** recovery_target_time's parser rejects ISO 8601's "T…Z"; this is the form it documents. */
export function pgTimestamp(d: Date): string {
  return d.toISOString().replace("T", " ").replace("Z", "+00");
}

async function logLength(file: string): Promise<number> {
  if (!existsSync(file)) return 0;
  return (await readFile(file)).length;
}

async function logSince(file: string, offset: number): Promise<string> {
  const buf = await readFile(file).catch(() => Buffer.alloc(0));
  return buf.subarray(offset).toString("utf8");
}
