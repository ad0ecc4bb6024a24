/**
 * The databases area's SQL for running commands and placing instances on hosts (jobs.ts, placement.ts):
 * database_commands as workers move them along, and the instances a host holds.
 */
import { allRows, anyRows, oneRow, type Queryable } from "../store/db.js";

/** A row of database_commands: what was asked of an instance, and how it went. */
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

/** Passwords in command parameters are kept only until applied. */
const SECRET_PARAMS = ["password"];

/** A command that no longer applies (or gave up): failed with why, its secrets dropped. */
export async function failCommand(q: Queryable, id: string, error: string): Promise<void> {
  await q.query(
    `UPDATE database_commands SET status = 'failed', error = $2, finished_at = now(), params = params - $3::text[] WHERE id = $1`,
    [id, error, SECRET_PARAMS],
  );
}

export async function startCommand(q: Queryable, id: string): Promise<void> {
  await q.query(
    "UPDATE database_commands SET status = 'running', error = NULL, started_at = coalesce(started_at, now()), attempts = attempts + 1 WHERE id = $1",
    [id],
  );
}

export async function succeedCommand(q: Queryable, id: string, result: unknown): Promise<void> {
  await q.query(
    `UPDATE database_commands SET status = 'succeeded', finished_at = now(), result = $2, params = params - $3::text[] WHERE id = $1`,
    [id, result ?? null, SECRET_PARAMS],
  );
}

/** A failed attempt: queued again with the error, or failed for good (`final`). */
export async function commandAttemptFailed(q: Queryable, id: string, message: string, final: boolean): Promise<void> {
  await q.query(
    `UPDATE database_commands SET status = $2, error = $3, finished_at = CASE WHEN $2 = 'failed' THEN now() END,
       params = CASE WHEN $2 = 'failed' THEN params - $4::text[] ELSE params END WHERE id = $1`,
    [id, final ? "failed" : "queued", message, SECRET_PARAMS],
  );
}

/** The job gave up: the command fails unless it succeeded meanwhile; its instance and kind when it did fail. */
export async function failUnlessSucceeded(
  q: Queryable,
  id: string,
  message: string,
): Promise<{ database_id: string; kind: string } | null> {
  return oneRow<{ database_id: string; kind: string }>(
    q,
    "UPDATE database_commands SET status = 'failed', finished_at = now(), error = $2, params = params - $3::text[] WHERE id = $1 AND status <> 'succeeded' RETURNING database_id, kind",
    [id, message, SECRET_PARAMS],
  );
}

export async function hasOpenCommand(q: Queryable, databaseId: string, kind: string): Promise<boolean> {
  return anyRows(
    q,
    "SELECT 1 FROM database_commands WHERE database_id = $1 AND kind = $2 AND status IN ('queued', 'running')",
    [databaseId, kind],
  );
}

/** Queued commands (at start-up all, else those a minute old) and running ones, with whether they ran 20 minutes. */
export async function unfinishedCommands(
  q: Queryable,
  atStartup: boolean,
): Promise<{ id: string; database_id: string; status: string; stale: boolean }[]> {
  return allRows<{ id: string; database_id: string; status: string; stale: boolean }>(
    q,
    `SELECT c.id, c.database_id, c.status, c.started_at < now() - interval '20 minutes' AS stale FROM database_commands c
      WHERE (c.status = 'queued' AND ($1 OR c.created_at < now() - interval '1 minute')) OR c.status = 'running'`,
    [atStartup],
  );
}

/** Instances whose state is not their desired state, with no command queued or running (jobs.ts reconcileStates). */
export async function driftedDatabases(
  q: Queryable,
): Promise<{ id: string; desired_state: string; state: string; parent_id: string | null }[]> {
  return allRows<{ id: string; desired_state: string; state: string; parent_id: string | null }>(
    q,
    `SELECT d.id, d.desired_state, d.state, d.parent_id FROM databases d
      WHERE d.purged_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM database_commands c WHERE c.database_id = d.id AND c.status IN ('queued', 'running'))
        AND CASE WHEN d.desired_state = 'removed' THEN d.state <> 'removed'
                 ELSE d.state <> 'failed' AND (d.state = 'creating' OR d.state <> d.desired_state) END`,
  );
}

/** The host's instances whose server must be checked after a restart: up ones, and deleted ones. */
export async function serversToCheck(
  q: Queryable,
  hostId: string,
): Promise<{ id: string; state: string; desired_state: string }[]> {
  return allRows<{ id: string; state: string; desired_state: string }>(
    q,
    `SELECT id, state, desired_state FROM databases
      WHERE host_id = $1 AND (state IN ('running', 'paused', 'idle_stopped') OR desired_state = 'removed') AND purged_at IS NULL`,
    [hostId],
  );
}

/** The host of a command's instance: undefined without the command, null while the instance has none. */
export async function commandHost(q: Queryable, commandId: string): Promise<string | null | undefined> {
  const { rows } = await q.query<{ host_id: string | null }>(
    "SELECT d.host_id FROM database_commands c JOIN databases d ON d.id = c.database_id WHERE c.id = $1",
    [commandId],
  );
  return rows[0] ? rows[0].host_id : undefined;
}

/** Queued commands say why they wait. */
export async function markWaiting(q: Queryable, ids: string[], reason: string): Promise<void> {
  await q.query(
    "UPDATE database_commands SET error = $2 WHERE id = ANY($1) AND status = 'queued' AND error IS DISTINCT FROM $2",
    [ids, reason],
  );
}

/** Queued commands grouped by the host of their instance (null: not placed). */
export async function queuedByHost(q: Queryable): Promise<{ host_id: string | null; ids: string[] }[]> {
  return allRows<{ host_id: string | null; ids: string[] }>(
    q,
    `SELECT d.host_id, array_agg(c.id::text) AS ids FROM database_commands c JOIN databases d ON d.id = c.database_id
      WHERE c.status = 'queued' GROUP BY d.host_id`,
  );
}

/** Fails a command still queued; whether it was. */
export async function withdrawQueued(q: Queryable, commandId: string, reason: string): Promise<boolean> {
  return anyRows(
    q,
    "UPDATE database_commands SET status = 'failed', error = $2, finished_at = now(), params = params - 'password' WHERE id = $1 AND status = 'queued'",
    [commandId, reason],
  );
}

/** A new rotation supersedes queued ones: only the newest password is ever applied last (e.g. one whose request a crash cut). */
export async function supersedeRotations(q: Queryable, databaseId: string): Promise<void> {
  await q.query(
    `UPDATE database_commands SET status = 'failed', error = 'superseded by a newer password rotation', finished_at = now(), params = params - 'password'
      WHERE database_id = $1 AND kind = 'rotate_password' AND status = 'queued'`,
    [databaseId],
  );
}

export async function unplacedDatabaseIds(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM databases WHERE host_id IS NULL AND purged_at IS NULL",
  );
  return rows.map((r) => r.id);
}

/** Places an instance that has no host yet; whether this did. */
export async function placeUnplaced(q: Queryable, databaseId: string, hostId: string): Promise<boolean> {
  return anyRows(q, "UPDATE databases SET host_id = $2 WHERE id = $1 AND host_id IS NULL", [databaseId, hostId]);
}

/** The instances this host holds, for work that goes over all of them (the watcher, the start-up check). */
export async function databasesOnHost(q: Queryable, hostId: string, states: string[]): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM databases WHERE host_id = $1 AND state = ANY($2) AND purged_at IS NULL",
    [hostId, states],
  );
  return rows.map((r) => r.id);
}

/** The result of the instance's newest succeeded command of these kinds. */
export async function lastCommandResult<T>(q: Queryable, databaseId: string, kinds: string[]): Promise<T | null> {
  const { rows } = await q.query<{ result: T }>(
    `SELECT result FROM database_commands WHERE database_id = $1 AND kind = ANY($2) AND status = 'succeeded' AND result IS NOT NULL
      ORDER BY finished_at DESC LIMIT 1`,
    [databaseId, kinds],
  );
  return rows[0]?.result ?? null;
}

export async function findCommand(q: Queryable, id: string): Promise<CommandRow | null> {
  return oneRow<CommandRow>(q, "SELECT * FROM database_commands WHERE id = $1", [id]);
}

export async function recentCommands(q: Queryable, databaseId: string, limit = 10): Promise<CommandRow[]> {
  return allRows<CommandRow>(
    q,
    "SELECT * FROM database_commands WHERE database_id = $1 ORDER BY created_at DESC LIMIT $2",
    [databaseId, limit],
  );
}
