import { allRows, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/** database_backups: the index of an instance's base backups, snapshots and archived WAL (the files are the provider's). */
export interface BackupRow {
  id: string;
  database_id: string;
  kind: "base" | "wal" | "snapshot";
  label: string | null;
  status: string;
  size_bytes: number;
  started_at: Date | null;
  finished_at: Date | null;
  start_lsn: string | null;
  stop_lsn: string | null;
  verify_ok: boolean | null;
}

export async function recentBackups(q: Queryable, databaseId: string, limit = 20): Promise<BackupRow[]> {
  return allRows<BackupRow>(
    q,
    "SELECT * FROM database_backups WHERE database_id = $1 ORDER BY coalesce(finished_at, created_at) DESC LIMIT $2",
    [databaseId, limit],
  );
}

/** Every backup of the owner's instances, newest first. */
export async function backupsOf(q: Queryable, owner: Owner, limit: number): Promise<BackupRow[]> {
  return allRows<BackupRow>(
    q,
    "SELECT * FROM database_backups WHERE owner_kind = $1 AND owner_id = $2 ORDER BY coalesce(finished_at, created_at) DESC LIMIT $3",
    [owner.kind, owner.id, limit],
  );
}

/**
 * Records (or completes) one backup; it takes the owner of its database, `accountId` is the database's creator.
 * The database row is share-locked: a move to another owner (owned-repo.ts, the row first, then its backups)
 * committing meanwhile is waited for and its owner taken, so no backup keeps the owner its database just left
 * (a CI run under load listed a new backup under the old owner).
 */
export async function upsertBackup(
  q: Queryable,
  accountId: string,
  b: {
    id: string;
    databaseId: string;
    kind: string;
    label: string | null;
    status: string;
    sizeBytes: number;
    startedAt: string | null;
    finishedAt: string | null;
    startLsn: string | null;
    stopLsn: string | null;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO database_backups (id, database_id, account_id, owner_kind, owner_id, kind, label, status, size_bytes, started_at, finished_at, start_lsn, stop_lsn)
     SELECT $1, $2, $3, d.owner_kind, d.owner_id, $4, $5, $6, $7, $8, $9, $10, $11 FROM databases d WHERE d.id = $2
     FOR SHARE OF d
     ON CONFLICT (database_id, id) DO UPDATE SET status = EXCLUDED.status, size_bytes = EXCLUDED.size_bytes, finished_at = EXCLUDED.finished_at`,
    [
      b.id,
      b.databaseId,
      accountId,
      b.kind,
      b.label,
      b.status,
      b.sizeBytes,
      b.startedAt,
      b.finishedAt,
      b.startLsn,
      b.stopLsn,
    ],
  );
}

/** When the first complete base backup or snapshot finished: recovery cannot reach earlier moments. */
export async function firstRecoverableAt(q: Queryable, databaseId: string): Promise<Date | null> {
  const { rows } = await q.query<{ first: Date | null }>(
    "SELECT min(finished_at) AS first FROM database_backups WHERE database_id = $1 AND kind IN ('base', 'snapshot') AND status = 'complete'",
    [databaseId],
  );
  return rows[0]?.first ?? null;
}

/** Every backup row of a purged instance. */
export async function deleteAllBackups(q: Queryable, databaseId: string): Promise<void> {
  await q.query("DELETE FROM database_backups WHERE database_id = $1", [databaseId]);
}

export async function deleteBackups(q: Queryable, databaseId: string, ids: string[]): Promise<void> {
  if (ids.length)
    await q.query("DELETE FROM database_backups WHERE database_id = $1 AND id = ANY($2)", [databaseId, ids]);
}

export async function indexedWalIds(q: Queryable, databaseId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM database_backups WHERE database_id = $1 AND kind = 'wal'",
    [databaseId],
  );
  return rows.map((r) => r.id);
}

/** Base backups and snapshots whose checksums were not re-checked yet, oldest first. */
export async function unverifiedBackupIds(q: Queryable, databaseId: string, limit: number): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM database_backups WHERE database_id = $1 AND kind IN ('base', 'snapshot') AND verified_at IS NULL ORDER BY finished_at LIMIT $2",
    [databaseId, limit],
  );
  return rows.map((r) => r.id);
}

export async function markVerified(q: Queryable, databaseId: string, backupId: string, ok: boolean): Promise<void> {
  await q.query("UPDATE database_backups SET verified_at = now(), verify_ok = $3 WHERE database_id = $1 AND id = $2", [
    databaseId,
    backupId,
    ok,
  ]);
}

export async function corruptBackupIds(q: Queryable, databaseId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM database_backups WHERE database_id = $1 AND verify_ok = false ORDER BY finished_at",
    [databaseId],
  );
  return rows.map((r) => r.id);
}
