import type { Queryable } from "../store/db.js";

export interface DatabaseRow {
  id: string;
  account_id: string;
  name: string;
  slug: string;
  label: string | null;
  engine: string;
  version: 16 | 17;
  size: "dev" | "basic" | "pro" | "business";
  storage_gb: number;
  pitr_retention_days: number;
  desired_state: "running" | "paused" | "removed";
  state: "creating" | "running" | "paused" | "removed" | "failed";
  status_reason: string | null;
  db_name: string;
  db_user: string;
  host: string | null;
  port: number | null;
  allowlist: { cidr: string; label: string }[];
  authorized_clients: string[];
  compute_autoscale: Record<string, unknown>;
  storage_autoscale: Record<string, unknown>;
  ha_enabled: boolean;
  pool_enabled: boolean;
  extensions: string[];
  initial_password: string | null;
  initial_superuser_password: string | null;
  initial_credentials_revealed_at: Date | null;
  created_at: Date;
  removed_at: Date | null;
  /** The watcher's last WAL continuity check (migration 003); absent until it has run. */
  backup_health?: BackupHealth | null;
  storage_used_bytes?: string | number | null;
  health_checked_at?: Date | null;
}

/** Stored form of the watcher's continuity check: can the instance be recovered to any moment since its newest base backup? */
export interface BackupHealth {
  ok: boolean;
  problem: string | null;
  base_backup_id: string | null;
  timeline: number | null;
  from_segment: string | null;
  to_segment: string | null;
  checked_segments: number;
  missing_segments: string[];
  pending_segments: string[];
  archiver_failure: { wal: string; at: string } | null;
  /** Base backups and snapshots whose files no longer match their recorded sha256 checksums. */
  corrupt_backups: string[];
  checked_at: string;
}

export interface CommandRow {
  id: string;
  database_id: string;
  kind: string;
  status: "queued" | "running" | "succeeded" | "failed";
  params: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** By id or slug, within one account; purged instances are gone. */
export async function findDatabase(q: Queryable, accountId: string, ref: string, opts: { forUpdate?: boolean } = {}): Promise<DatabaseRow | null> {
  const byId = UUID.test(ref);
  const { rows } = await q.query<DatabaseRow>(
    `SELECT * FROM databases WHERE account_id = $1 AND ${byId ? "id = $2::uuid" : "slug = $2"} AND purged_at IS NULL
      ORDER BY created_at DESC LIMIT 1 ${opts.forUpdate ? "FOR UPDATE" : ""}`,
    [accountId, ref],
  );
  return rows[0] ?? null;
}

export async function findDatabaseById(q: Queryable, id: string): Promise<DatabaseRow | null> {
  const { rows } = await q.query<DatabaseRow>("SELECT * FROM databases WHERE id = $1", [id]);
  return rows[0] ?? null;
}

export async function listDatabases(q: Queryable, accountId: string, refs: string[] | null): Promise<DatabaseRow[]> {
  // named: this is a hot read, planned once per connection. A deleted instance is left out from the moment of
  // the DELETE (desired_state), whatever its observed state says while the reconciler catches up.
  const { rows } = await q.query<DatabaseRow>({
    name: "databases-list",
    text: `SELECT * FROM databases WHERE account_id = $1 AND state <> 'removed' AND desired_state <> 'removed' AND purged_at IS NULL
              AND ($2::text[] IS NULL OR id::text = ANY($2) OR slug = ANY($2))
            ORDER BY created_at`,
    values: [accountId, refs],
  });
  return rows;
}

/** SET list and values of a patch, parameters numbered from $2 ($1 is the id). */
function setClause(patch: Partial<Record<keyof DatabaseRow, unknown>>): { sets: string; values: unknown[] } {
  const keys = Object.keys(patch);
  const values = keys.map((k) => {
    const v = (patch as Record<string, unknown>)[k];
    return v !== null && typeof v === "object" && !(v instanceof Date) && !Array.isArray(v) ? JSON.stringify(v) : Array.isArray(v) && k !== "extensions" ? JSON.stringify(v) : v;
  });
  return { sets: keys.map((k, i) => `${k} = $${i + 2}`).join(", "), values };
}

export async function updateDatabase(q: Queryable, id: string, patch: Partial<Record<keyof DatabaseRow, unknown>>): Promise<void> {
  if (!Object.keys(patch).length) return;
  const { sets, values } = setClause(patch);
  await q.query(`UPDATE databases SET ${sets} WHERE id = $1`, [id, ...values]);
}

/** Commands that own the `creating` state (set when they are asked for): only they may end it. */
const CREATING_OWNERS = ["provision", "restore"];

/**
 * The one place a finished (or given-up) command's outcome reaches its instance's row. desired_state is the
 * truth and is written only when a command is asked for, so a patch carrying `state` is a compare-and-set
 * against it, checked in the same statement as the write:
 *   - `running`, `paused`, `removed` are written only while desired_state is that same value; `failed` only while
 *     it is not `removed`. A stop finishing after a DELETE was accepted therefore writes nothing: `removed` wins,
 *     and stays until a restore (which sets desired_state back to running) is asked for;
 *   - while the row is `creating` (a provision or restore is on its way) only those two commands end it.
 * When the check fails, none of the patch is written (its other fields belong to the state it described) and
 * false is returned. A patch without `state` (extensions, size, purged_at…) is written as it is.
 */
export async function applyCommandOutcome(q: Queryable, id: string, kind: string, patch: Partial<Record<keyof DatabaseRow, unknown>>): Promise<boolean> {
  if (!("state" in patch)) {
    await updateDatabase(q, id, patch);
    return true;
  }
  const { sets, values } = setClause(patch);
  const n = values.length + 2;
  const res = await q.query(
    `UPDATE databases SET ${sets} WHERE id = $1
        AND CASE $${n}::text WHEN 'failed' THEN desired_state <> 'removed' ELSE desired_state = $${n}::text END
        AND (state <> 'creating' OR $${n + 1}::text = ANY($${n + 2}::text[]) OR $${n}::text = 'removed')`,
    [id, ...values, patch.state, kind, CREATING_OWNERS],
  );
  return (res.rowCount ?? 0) > 0;
}

export async function insertCommand(q: Queryable, c: { id: string; databaseId: string; kind: string; params: Record<string, unknown> }): Promise<void> {
  await q.query("INSERT INTO database_commands (id, database_id, kind, status, params) VALUES ($1, $2, $3, 'queued', $4)", [c.id, c.databaseId, c.kind, c.params]);
}

export async function findCommand(q: Queryable, id: string): Promise<CommandRow | null> {
  const { rows } = await q.query<CommandRow>("SELECT * FROM database_commands WHERE id = $1", [id]);
  return rows[0] ?? null;
}

export async function recentCommands(q: Queryable, databaseId: string, limit = 10): Promise<CommandRow[]> {
  const { rows } = await q.query<CommandRow>("SELECT * FROM database_commands WHERE database_id = $1 ORDER BY created_at DESC LIMIT $2", [databaseId, limit]);
  return rows;
}

export async function recentBackups(q: Queryable, databaseId: string, limit = 20): Promise<BackupRow[]> {
  const { rows } = await q.query<BackupRow>(
    "SELECT * FROM database_backups WHERE database_id = $1 ORDER BY coalesce(finished_at, created_at) DESC LIMIT $2",
    [databaseId, limit],
  );
  return rows;
}

export async function upsertBackup(q: Queryable, accountId: string, b: {
  id: string; databaseId: string; kind: string; label: string | null; status: string; sizeBytes: number;
  startedAt: string | null; finishedAt: string | null; startLsn: string | null; stopLsn: string | null;
}): Promise<void> {
  await q.query(
    `INSERT INTO database_backups (id, database_id, account_id, kind, label, status, size_bytes, started_at, finished_at, start_lsn, stop_lsn)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (database_id, id) DO UPDATE SET status = EXCLUDED.status, size_bytes = EXCLUDED.size_bytes, finished_at = EXCLUDED.finished_at`,
    [b.id, b.databaseId, accountId, b.kind, b.label, b.status, b.sizeBytes, b.startedAt, b.finishedAt, b.startLsn, b.stopLsn],
  );
}
