/**
 * Scale-to-zero's SQL for dev databases (src/databases/idle): instances whose idle time may have passed, stopping
 * them for idleness, the record of a wake, and what the wake fronts of a host should hold.
 */
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import type { OwnerKind } from "../../kernel/owner.js";

/** A running instance of this host with scale-to-zero on, and no command under way. */
export interface IdleCandidate {
  id: string;
  idle_stop_seconds: number;
}

export async function idleCandidatesOnHost(q: Queryable, hostId: string): Promise<IdleCandidate[]> {
  return allRows<IdleCandidate>(
    q,
    `SELECT d.id, d.idle_stop_seconds FROM databases d
      WHERE d.host_id = $1 AND d.idle_stop_seconds IS NOT NULL AND d.desired_state = 'running' AND d.state = 'running'
        AND d.purged_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM database_commands c WHERE c.database_id = d.id AND c.status IN ('queued', 'running'))`,
    [hostId],
  );
}

/** The sweep saw a client connection now: the idle clock starts again. */
export async function markActive(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE databases SET last_active_at = now() WHERE id = $1", [id]);
}

type Named = { owner_kind: OwnerKind; owner_id: string; name: string; last_active_at: Date | null };

/**
 * Marks the instance to stop for idleness if it is still running, unchanged, and its idle time has passed since
 * the later of its start and the last connection seen. Returns it when it did.
 */
export async function markIdleStopped(q: Queryable, id: string): Promise<Named | null> {
  return oneRow<Named>(
    q,
    `UPDATE databases SET desired_state = 'idle_stopped', status_reason = 'stopped while idle'
      WHERE id = $1 AND desired_state = 'running' AND state = 'running' AND idle_stop_seconds IS NOT NULL
        AND greatest(awake_since, coalesce(last_active_at, awake_since)) < now() - make_interval(secs => idle_stop_seconds)
      RETURNING owner_kind, owner_id, name, last_active_at`,
    [id],
  );
}

/** A client connected after the sweep decided (the stop command saw it): the instance stays running. */
export async function keepAwake(q: Queryable, id: string): Promise<void> {
  await q.query(
    `UPDATE databases SET desired_state = 'running', status_reason = NULL, last_active_at = now()
      WHERE id = $1 AND desired_state = 'idle_stopped'`,
    [id],
  );
}

export interface WakeRow {
  id: string;
  account_id: string;
  owner_kind: OwnerKind;
  owner_id: string;
  name: string;
  size: string;
  storage_gb: number;
  desired_state: string;
  state: string;
}

export async function lockForWake(q: Queryable, id: string): Promise<WakeRow | null> {
  return oneRow<WakeRow>(
    q,
    `SELECT id, account_id, owner_kind, owner_id, name, size, storage_gb, desired_state, state FROM databases
      WHERE id = $1 AND purged_at IS NULL FOR UPDATE`,
    [id],
  );
}

/** Woken: running again from now (its idle clock too). */
export async function markWoken(q: Queryable, id: string): Promise<void> {
  await q.query(
    `UPDATE databases SET desired_state = 'running', status_reason = NULL, awake_since = now(), wakes = wakes + 1
      WHERE id = $1`,
    [id],
  );
}

/** Where a wake stands: the instance's states and the newest start command asked since `since`. */
export async function wakeProgress(
  q: Queryable,
  id: string,
  since: Date,
): Promise<{
  state: string;
  desired_state: string;
  status_reason: string | null;
  start_status: string | null;
  start_error: string | null;
} | null> {
  return oneRow(
    q,
    `SELECT d.state, d.desired_state, d.status_reason, c.status AS start_status, c.error AS start_error
       FROM databases d
       LEFT JOIN LATERAL (SELECT status, error FROM database_commands
                           WHERE database_id = d.id AND kind = 'start' AND created_at >= $2
                           ORDER BY created_at DESC LIMIT 1) c ON true
      WHERE d.id = $1`,
    [id, since],
  );
}

/** The instances of this host that sleep now: their ports are for a wake front. */
export async function idleStoppedOnHost(q: Queryable, hostId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM databases WHERE host_id = $1 AND desired_state = 'idle_stopped' AND state = 'idle_stopped'
        AND purged_at IS NULL`,
    [hostId],
  );
  return rows.map((r) => r.id);
}

/** The scale-to-zero setting changed: its idle clock starts again now. */
export async function setIdleStop(q: Queryable, id: string, seconds: number | null): Promise<void> {
  await q.query("UPDATE databases SET idle_stop_seconds = $2, awake_since = now() WHERE id = $1", [id, seconds]);
}

/** The store's clock (the transaction's start when inside one): wake progress compares command times with it. */
export async function storeNow(q: Queryable): Promise<Date> {
  return (await q.query<{ now: Date }>("SELECT now() AS now")).rows[0].now;
}
