import { randomUUID } from "node:crypto";
import { inTransaction, type Db } from "../store/db.js";
import type { DatabaseProvider } from "./provider/types.js";
import * as repo from "./repo.js";

const GiB = 1024 ** 3;
/** Storage autoscale defaults when the settings leave a field out (PATCH /v1/databases/{id}/storage). */
export const AUTOSCALE_DEFAULTS = { threshold_pct: 80, step_gb: 10, max_gb: 16384 } as const;

export interface WatchDeps {
  db: Db;
  provider: DatabaseProvider;
}

/**
 * One pass of the watcher over every running instance not busy with a command: storage autoscale, then the quota (read-only
 * above it), the WAL index and retention, then the WAL continuity check whose result GET shows as
 * `backup_health`. Exported so it can be run on demand; the `databases.watch` job runs it every minute.
 */
export async function watchDatabases({ db, provider }: WatchDeps, onlyIds?: string[]): Promise<void> {
  for (const row of await repo.watchedDatabases(db, onlyIds ?? null)) {
    // an instance with a command in flight (switchover, resize, restore…) is left alone until the next pass
    const lock = await db.connect();
    try {
      if (!(await repo.tryInstanceLock(lock, row.id))) continue;
      try {
        await watchOne(db, provider, row);
      } catch {
        // one instance's trouble must not stop the watcher for the others
      } finally {
        await repo.releaseInstanceLock(lock, row.id).catch(() => {});
      }
    } finally {
      lock.release();
    }
  }
}

async function watchOne(db: Db, provider: DatabaseProvider, row: repo.DatabaseRow): Promise<void> {
  let st = await provider.enforceStorageQuota(row.id);
  const storageGb = row.storage_gb;
  // the store is the truth: a quota change recorded but not applied (crash in between) is applied now
  if (st.quotaBytes !== Math.round(storageGb * GiB)) st = await provider.setStorageQuota(row.id, storageGb);
  const grown = await autoscaleStorage(db, row, st.usageBytes);
  if (grown !== null) {
    st = await provider.setStorageQuota(row.id, grown);
  }
  const reason = st.readOnly?.reason ?? null;
  if (reason !== row.status_reason) await repo.updateDatabase(db, row.id, { status_reason: reason });

  for (const wal of await provider.listArchivedWal(row.id)) {
    await repo.upsertBackup(db, row.account_id, {
      id: wal.id,
      databaseId: row.id,
      kind: "wal",
      label: null,
      status: wal.status,
      sizeBytes: wal.sizeBytes,
      startedAt: wal.startedAt,
      finishedAt: wal.finishedAt,
      startLsn: wal.startLsn,
      stopLsn: wal.stopLsn,
    });
  }
  const pruned = await provider.pruneBackups(row.id, row.pitr_retention_days);
  await repo.deleteBackups(db, row.id, pruned.removedBackups);
  if (pruned.removedWal) {
    const kept = new Set((await provider.listArchivedWal(row.id)).map((w) => w.id));
    await repo.deleteBackups(
      db,
      row.id,
      (await repo.indexedWalIds(db, row.id)).filter((id) => !kept.has(id)),
    );
  }

  // stored checksums re-checked once per backup (base backups and snapshots), after it was taken
  for (const id of await repo.unverifiedBackupIds(db, row.id, 3)) {
    const v = await provider.verifyBackup(row.id, id).catch(() => null);
    if (v) await repo.markVerified(db, row.id, id, v.ok);
  }
  const corrupt = await repo.corruptBackupIds(db, row.id);

  const wc = await provider.walContinuity(row.id);
  const health: repo.BackupHealth = {
    ok: wc.ok && corrupt.length === 0,
    problem:
      wc.problem ??
      (corrupt.length ? `${corrupt.length} backup(s) no longer match their checksums (${corrupt.join(", ")})` : null),
    base_backup_id: wc.baseBackupId,
    timeline: wc.timeline,
    from_segment: wc.fromSegment,
    to_segment: wc.toSegment,
    checked_segments: wc.checkedSegments,
    missing_segments: wc.missing,
    pending_segments: wc.pending,
    archiver_failure: wc.archiverFailure,
    corrupt_backups: corrupt,
    checked_at: new Date().toISOString(),
  };
  await repo.updateDatabase(db, row.id, {
    backup_health: health,
    storage_used_bytes: st.usageBytes,
    health_checked_at: new Date(),
  });
}

/**
 * Grows storage_gb by step_gb (up to max_gb) once usage crosses threshold_pct of it. The growth is
 * recorded in the store first, conditionally on the value read, so two watchers never add two steps;
 * it shows among the instance's commands as `storage_autoscale`. Returns the new size, or null.
 */
export async function autoscaleStorage(db: Db, row: repo.DatabaseRow, usageBytes: number): Promise<number | null> {
  const cfg = row.storage_autoscale as { enabled?: boolean; threshold_pct?: number; step_gb?: number; max_gb?: number };
  if (!cfg?.enabled) return null;
  const threshold = cfg.threshold_pct ?? AUTOSCALE_DEFAULTS.threshold_pct;
  const step = cfg.step_gb ?? AUTOSCALE_DEFAULTS.step_gb;
  const max = cfg.max_gb ?? AUTOSCALE_DEFAULTS.max_gb;
  if (row.storage_gb >= max || usageBytes < (row.storage_gb * GiB * threshold) / 100) return null;
  const next = Math.min(row.storage_gb + step, max);
  return inTransaction(db, async (tx) => {
    if (!(await repo.growStorage(tx, row.id, row.storage_gb, next))) return null;
    await repo.insertDoneCommand(tx, {
      id: randomUUID(),
      databaseId: row.id,
      kind: "storage_autoscale",
      params: { threshold_pct: threshold, step_gb: step, max_gb: max },
      result: { from_gb: row.storage_gb, to_gb: next, usage_bytes: usageBytes },
    });
    return next;
  });
}
