import { allRows, anyRows, oneRow, type Queryable, returnedIds } from "../store/db.js";
import { recordEvent } from "../events/public.js";
import type { Owner, OwnerKind } from "../kernel/owner.js";
import { finderOf } from "../store/find.js";

// database_backups has its own file; re-exported so `repo.*` names every table of the area
export * from "./backups-repo.js";
export * from "./attachments-repo.js";

export interface DatabaseRow {
  id: string;
  /** the account that created it */
  account_id: string;
  /** who owns it and pays for it (migration 006) */
  owner_kind: OwnerKind;
  owner_id: string;
  name: string;
  slug: string;
  label: string | null;
  engine: string;
  version: 16 | 17;
  size: "dev" | "basic" | "pro" | "business";
  storage_gb: number;
  pitr_retention_days: number;
  /** idle_stopped: a dev database stopped after idle_stop_seconds without connections; the next one starts it */
  desired_state: "running" | "paused" | "removed" | "idle_stopped";
  state: "creating" | "running" | "paused" | "removed" | "failed" | "idle_stopped";
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
  /** The owner role's current password, sealed, for attached apps (migration 016); null on older instances. */
  app_password?: string | null;
  /** The owner's app networks last applied beside a non-empty allowlist (migration 016). */
  app_cidrs?: string[] | null;
  /** A branch's parent, the moment asked for (null: now) and the moment its data is from (migration 058). */
  parent_id?: string | null;
  branch_target?: Date | null;
  branched_at?: Date | null;
  /** Scale-to-zero (migration 061, src/databases/idle): seconds without connections before an idle stop; null never. */
  idle_stop_seconds?: number | null;
  awake_since?: Date;
  wakes?: number;
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// ---- databases: the API's reads and writes, always within one owner

/** By id or slug, within one owner; purged instances are gone. */
export const findDatabase = finderOf<DatabaseRow>({
  table: "databases",
  refColumn: "slug",
  where: "purged_at IS NULL",
  order: "created_at DESC",
});

export async function findDatabaseById(q: Queryable, id: string): Promise<DatabaseRow | null> {
  return oneRow<DatabaseRow>(q, "SELECT * FROM databases WHERE id = $1", [id]);
}

/** The owner's live instances, oldest first; `refs` (ids or slugs) narrows them for instance-limited keys. */
export async function listDatabases(q: Queryable, owner: Owner, refs: string[] | null): Promise<DatabaseRow[]> {
  // named: this is a hot read, planned once per connection. A deleted instance is left out from the moment of
  // the DELETE (desired_state), whatever its observed state says while the reconciler catches up.
  const { rows } = await q.query<DatabaseRow>({
    name: "databases-list-by-owner",
    text: `SELECT * FROM databases WHERE owner_kind = $1 AND owner_id = $2 AND state <> 'removed' AND desired_state <> 'removed' AND purged_at IS NULL
              AND ($3::text[] IS NULL OR id::text = ANY($3) OR slug = ANY($3))
            ORDER BY created_at`,
    values: [owner.kind, owner.id, refs],
  });
  return rows;
}

/** A new instance in state creating; a live slug taken raises the unique violation databases_slug_live. */
export async function insertDatabase(q: Queryable, row: DatabaseRow): Promise<void> {
  await q.query(
    `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, engine, version, size, storage_gb, pitr_retention_days, desired_state, state,
       db_name, db_user, initial_password, initial_superuser_password, host_id, app_password, idle_stop_seconds,
       parent_id, branch_target)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
    [
      row.id,
      row.account_id,
      row.owner_kind,
      row.owner_id,
      row.name,
      row.slug,
      row.engine,
      row.version,
      row.size,
      row.storage_gb,
      row.pitr_retention_days,
      row.desired_state,
      row.state,
      row.db_name,
      row.db_user,
      row.initial_password,
      row.initial_superuser_password,
      row.host_id ?? null,
      row.app_password ?? null,
      row.idle_stop_seconds ?? null,
      row.parent_id ?? null,
      row.branch_target ?? null,
    ],
  );
}

/** An instance its host could not reserve: forgotten whole, so its slug is free again. */
export async function forgetUnreserved(q: Queryable, id: string): Promise<void> {
  await q.query("DELETE FROM database_commands WHERE database_id = $1", [id]);
  await q.query("DELETE FROM databases WHERE id = $1", [id]);
}

/** SET list and values of a patch, parameters numbered from $2 ($1 is the id). */
function setClause(patch: Partial<Record<keyof DatabaseRow, unknown>>): { sets: string; values: unknown[] } {
  const keys = Object.keys(patch);
  const values = keys.map((k) => {
    const v = (patch as Record<string, unknown>)[k];
    return v !== null && typeof v === "object" && !(v instanceof Date) && !Array.isArray(v)
      ? JSON.stringify(v)
      : Array.isArray(v) && k !== "extensions"
        ? JSON.stringify(v)
        : v;
  });
  return { sets: keys.map((k, i) => `${k} = $${i + 2}`).join(", "), values };
}

export async function updateDatabase(
  q: Queryable,
  id: string,
  patch: Partial<Record<keyof DatabaseRow, unknown>>,
): Promise<void> {
  if (!Object.keys(patch).length) return;
  const { sets, values } = setClause(patch);
  await q.query(`UPDATE databases SET ${sets} WHERE id = $1`, [id, ...values]);
}

/** Commands that own the `creating` state (set when they are asked for): only they may end it. */
const CREATING_OWNERS = ["provision", "restore", "branch", "reset"];

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
export async function applyCommandOutcome(
  q: Queryable,
  id: string,
  kind: string,
  patch: Partial<Record<keyof DatabaseRow, unknown>>,
): Promise<boolean> {
  if (!("state" in patch)) {
    await updateDatabase(q, id, patch);
    return true;
  }
  const { sets, values } = setClause(patch);
  const n = values.length + 2;
  const res = await q.query<{ owner_kind: OwnerKind; owner_id: string; name: string; old_state: string }>(
    `UPDATE databases SET ${sets} FROM (SELECT state AS old_state FROM databases WHERE id = $1) o WHERE id = $1
        AND CASE $${n}::text WHEN 'failed' THEN desired_state <> 'removed' ELSE desired_state = $${n}::text END
        AND (state <> 'creating' OR $${n + 1}::text = ANY($${n + 2}::text[]) OR $${n}::text = 'removed')
      RETURNING owner_kind, owner_id, name, o.old_state`,
    [id, ...values, patch.state, kind, CREATING_OWNERS],
  );
  const r = res.rows[0];
  // a change of state users care about is an event, committed with the outcome (src/events/public.ts)
  if (r && (patch.state === "running" || patch.state === "failed") && r.old_state !== patch.state)
    await recordEvent(q, {
      type: patch.state === "running" ? "database.running" : "database.failed",
      owner: { kind: r.owner_kind, id: r.owner_id },
      resource: { kind: "database", id },
      data: { name: r.name, command: kind, reason: patch.status_reason ?? null },
    });
  return (res.rowCount ?? 0) > 0;
}

/** Forgets the initial passwords once they were shown. */
export async function forgetInitialCredentials(q: Queryable, id: string): Promise<void> {
  await q.query(
    `UPDATE databases SET initial_credentials_revealed_at = now(), initial_password = NULL, initial_superuser_password = NULL
      WHERE id = $1 AND initial_credentials_revealed_at IS NULL`,
    [id],
  );
}

/** Grows storage_gb only if it still has the value read (two watchers never add two steps). */
export async function growStorage(q: Queryable, id: string, fromGb: number, toGb: number): Promise<boolean> {
  return anyRows(q, "UPDATE databases SET storage_gb = $3 WHERE id = $1 AND storage_gb = $2", [id, fromGb, toGb]);
}

// ---- databases: the periodic jobs

/** Running instances the watcher looks at; one being paused (desired paused) is left to its stop command. */
export async function watchedDatabases(q: Queryable, onlyIds: string[] | null): Promise<DatabaseRow[]> {
  return allRows<DatabaseRow>(
    q,
    "SELECT * FROM databases WHERE state = 'running' AND desired_state = 'running' AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))",
    [onlyIds],
  );
}

export async function runningDatabaseIds(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>("SELECT id FROM databases WHERE state = 'running'");
  return rows.map((r) => r.id);
}

/** Removed instances past the grace period, not purged yet. */
export async function purgeDueIds(q: Queryable, graceDays: number): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM databases WHERE state = 'removed' AND purged_at IS NULL AND removed_at < now() - $1 * interval '1 day'",
    [graceDays],
  );
  return rows.map((r) => r.id);
}

/**
 * The per-instance lock a command holds while it runs (jobs.ts), tried without waiting. Taken on a
 * connection of its own and released on the same one.
 */
export async function tryInstanceLock(client: Queryable, id: string): Promise<boolean> {
  return (await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext('database:' || $1)) AS ok", [id]))
    .rows[0].ok;
}

export async function releaseInstanceLock(client: Queryable, id: string): Promise<void> {
  await client.query("SELECT pg_advisory_unlock(hashtext('database:' || $1))", [id]);
}

// ---- databases: what billing meters and pauses (through the kernel: metering.ts)

export type BillableRow = Pick<DatabaseRow, "id" | "account_id" | "owner_kind" | "owner_id" | "size" | "storage_gb"> & {
  state: "running" | "paused" | "idle_stopped";
};

// an idle-stopped instance keeps its data: metered as paused (storage only; metering.ts)
const BILLABLE =
  "SELECT id, account_id, owner_kind, owner_id, size, storage_gb, state FROM databases WHERE state IN ('running', 'paused', 'idle_stopped')";

/**
 * Instances holding resources, created before `createdBefore`, in (owner_kind, owner_id, id) order after
 * `after`: the owner prefix walks the index databases_owner, so a page costs its own rows.
 */
export async function billableDatabases(
  q: Queryable,
  page: { createdBefore: Date; after: { owner: Owner; id: string } | null; limit: number },
): Promise<BillableRow[]> {
  const { rows } = page.after
    ? await q.query<BillableRow>(
        `${BILLABLE} AND created_at < $1 AND (owner_kind, owner_id, id) > ($2, $3::uuid, $4::uuid) ORDER BY owner_kind, owner_id, id LIMIT $5`,
        [page.createdBefore, page.after.owner.kind, page.after.owner.id, page.after.id, page.limit],
      )
    : await q.query<BillableRow>(`${BILLABLE} AND created_at < $1 ORDER BY owner_kind, owner_id, id LIMIT $2`, [
        page.createdBefore,
        page.limit,
      ]);
  return rows;
}

export async function billableDatabasesOf(q: Queryable, owner: Owner): Promise<BillableRow[]> {
  return allRows<BillableRow>(q, `${BILLABLE} AND owner_kind = $1 AND owner_id = $2 ORDER BY id`, [
    owner.kind,
    owner.id,
  ]);
}

export async function namesOf(q: Queryable, ids: string[]): Promise<{ id: string; name: string; slug: string }[]> {
  const valid = ids.filter((id) => UUID.test(id));
  if (!valid.length) return [];
  return allRows<{ id: string; name: string; slug: string }>(
    q,
    "SELECT id, name, slug FROM databases WHERE id = ANY($1::uuid[])",
    [valid],
  );
}

/** Marks the owner's running paid instances to be paused, with the reason shown to the user; returns their ids. */
export async function pausePaidDatabases(q: Queryable, owner: Owner, reason: string): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE databases SET desired_state = 'paused', status_reason = $3
      WHERE owner_kind = $1 AND owner_id = $2 AND desired_state = 'running' AND state = 'running' AND size <> 'dev'
      RETURNING id`,
    [owner.kind, owner.id, reason],
  );
}

/** Marks to run again the owner's instances a pause with this reason stopped; returns their ids. */
export async function resumePausedDatabases(q: Queryable, owner: Owner, reason: string): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE databases SET desired_state = 'running'
      WHERE owner_kind = $1 AND owner_id = $2 AND status_reason = $3 AND desired_state = 'paused'
      RETURNING id`,
    [owner.kind, owner.id, reason],
  );
}

// ---- database_commands

export async function insertCommand(
  q: Queryable,
  c: { id: string; databaseId: string; kind: string; params: Record<string, unknown> },
): Promise<void> {
  await q.query(
    "INSERT INTO database_commands (id, database_id, kind, status, params) VALUES ($1, $2, $3, 'queued', $4)",
    [c.id, c.databaseId, c.kind, c.params],
  );
}

/** A command the platform carried out itself at once (e.g. storage autoscale), recorded as succeeded. */
export async function insertDoneCommand(
  q: Queryable,
  c: { id: string; databaseId: string; kind: string; params: Record<string, unknown>; result: Record<string, unknown> },
): Promise<void> {
  await q.query(
    `INSERT INTO database_commands (id, database_id, kind, status, params, result, started_at, finished_at, attempts)
     VALUES ($1, $2, $3, 'succeeded', $4, $5, now(), now(), 1)`,
    [c.id, c.databaseId, c.kind, c.params, c.result],
  );
}

// the commands' reads live with their other SQL; named here too for the callers that use this module
export { findCommand, recentCommands, type CommandRow } from "./commands-repo.js";
