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
  /** The host holding the instance's files (migration 009; src/databases/placement.ts); null: not placed yet. */
  host_id?: string | null;
  standby_host_id?: string | null;
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
  // named: this is a hot read, planned once per connection
  const { rows } = await q.query<DatabaseRow>({
    name: "databases-list",
    text: `SELECT * FROM databases WHERE account_id = $1 AND state <> 'removed' AND purged_at IS NULL
              AND ($2::text[] IS NULL OR id::text = ANY($2) OR slug = ANY($2))
            ORDER BY created_at`,
    values: [accountId, refs],
  });
  return rows;
}

export async function updateDatabase(q: Queryable, id: string, patch: Partial<Record<keyof DatabaseRow, unknown>>): Promise<void> {
  const keys = Object.keys(patch);
  if (!keys.length) return;
  const sets = keys.map((k, i) => `${k} = $${i + 2}`);
  const values = keys.map((k) => {
    const v = (patch as Record<string, unknown>)[k];
    return v !== null && typeof v === "object" && !(v instanceof Date) && !Array.isArray(v) ? JSON.stringify(v) : Array.isArray(v) && k !== "extensions" ? JSON.stringify(v) : v;
  });
  await q.query(`UPDATE databases SET ${sets.join(", ")} WHERE id = $1`, [id, ...values]);
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
    `INSERT INTO database_backups (id, database_id, account_id, owner_kind, owner_id, kind, label, status, size_bytes, started_at, finished_at, start_lsn, stop_lsn)
     SELECT $1, $2, $3, d.owner_kind, d.owner_id, $4, $5, $6, $7, $8, $9, $10, $11 FROM databases d WHERE d.id = $2
     ON CONFLICT (database_id, id) DO UPDATE SET status = EXCLUDED.status, size_bytes = EXCLUDED.size_bytes, finished_at = EXCLUDED.finished_at`,
    [b.id, b.databaseId, accountId, b.kind, b.label, b.status, b.sizeBytes, b.startedAt, b.finishedAt, b.startLsn, b.stopLsn],
  );
}
