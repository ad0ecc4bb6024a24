import { allRows, countOf, isUuid, oneRow, returnedRow, type Queryable } from "../store/db.js";
import { xactLock } from "../store/locks.js";
import { ownerKey, type Owner, type OwnerKind } from "../kernel/owner.js";

export interface SandboxRow {
  id: string;
  owner_kind: OwnerKind;
  owner_id: string;
  /** the account that created it */
  account_id: string;
  image: string;
  network: boolean;
  timeout_s: number;
  host_id: string;
  state: "running" | "expired" | "removed";
  state_reason: string | null;
  created_at: Date;
  expires_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  /** as the API shows it: a running sandbox past its time is expired even before the reaper marks it (reads only) */
  shown_state?: "running" | "expired" | "removed";
  /** milliseconds left before expires_at, by the database's clock (reads only) */
  remaining_ms?: number;
}

/** Columns of every read: the row plus what the API shows, by the store's clock. */
const READ = `*, CASE WHEN state = 'running' AND expires_at <= now() THEN 'expired' ELSE state END AS shown_state,
  greatest(0, extract(epoch FROM expires_at - now()) * 1000)::float8 AS remaining_ms`;

/** One sandbox of the owner by id (sandboxes have no slug); removed ones included. */
export async function findSandbox(q: Queryable, owner: Owner, id: string): Promise<SandboxRow | null> {
  if (!isUuid(id)) return null;
  return oneRow<SandboxRow>(
    q,
    `SELECT ${READ} FROM sandboxes WHERE owner_kind = $1 AND owner_id = $2 AND id = $3::uuid`,
    [owner.kind, owner.id, id],
  );
}

/** Running sandboxes, and those that ended in the last day, newest first; refs narrow it for instance-limited keys. */
export async function listSandboxes(q: Queryable, owner: Owner, refs: string[] | null): Promise<SandboxRow[]> {
  return allRows<SandboxRow>(
    q,
    `SELECT ${READ} FROM sandboxes WHERE owner_kind = $1 AND owner_id = $2 AND state <> 'removed'
        AND (state = 'running' OR ended_at > now() - interval '1 day')
        AND ($3::text[] IS NULL OR id::text = ANY($3))
      ORDER BY created_at DESC LIMIT 200`,
    [owner.kind, owner.id, refs],
  );
}

/**
 * Inserts a running sandbox unless the owner already has `max` of them running: counted under a
 * per-owner transaction lock, so concurrent creations cannot both pass. Null when the limit is reached.
 */
export async function insertSandbox(
  q: Queryable,
  row: Pick<
    SandboxRow,
    "id" | "owner_kind" | "owner_id" | "account_id" | "image" | "network" | "timeout_s" | "host_id"
  >,
  max: number,
): Promise<SandboxRow | null> {
  await xactLock(q, `sandboxes:${ownerKey({ kind: row.owner_kind, id: row.owner_id })}`);
  const running = await countOf(
    q,
    `SELECT count(*)::int AS n FROM sandboxes
      WHERE owner_kind = $1 AND owner_id = $2 AND state = 'running' AND expires_at > now()`,
    [row.owner_kind, row.owner_id],
  );
  if (running >= max) return null;
  return returnedRow<SandboxRow>(
    q,
    `INSERT INTO sandboxes (id, owner_kind, owner_id, account_id, image, network, timeout_s, host_id, state, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::int, $8, 'running', now() + $7::int * interval '1 second')
     RETURNING ${READ}`,
    [row.id, row.owner_kind, row.owner_id, row.account_id, row.image, row.network, row.timeout_s, row.host_id],
  );
}

/** Records that the container runs; null when the sandbox ended meanwhile (deleted during its creation). */
export async function markStarted(q: Queryable, id: string): Promise<SandboxRow | null> {
  return oneRow<SandboxRow>(
    q,
    `UPDATE sandboxes SET started_at = now() WHERE id = $1 AND state = 'running' RETURNING ${READ}`,
    [id],
  );
}

/** A running sandbox ends as expired (timed out, or its container was lost), with the reason shown in GET. */
export async function markExpired(q: Queryable, id: string, reason: string): Promise<void> {
  await q.query(
    "UPDATE sandboxes SET state = 'expired', state_reason = $2, ended_at = now() WHERE id = $1 AND state = 'running'",
    [id, reason],
  );
}

/** Deleted by its owner (or its creation failed): removed, whatever it was. */
export async function markRemoved(q: Queryable, id: string, reason: string | null): Promise<SandboxRow | null> {
  return oneRow<SandboxRow>(
    q,
    `UPDATE sandboxes SET state = 'removed', state_reason = coalesce($2, state_reason), ended_at = coalesce(ended_at, now())
      WHERE id = $1 RETURNING ${READ}`,
    [id, reason],
  );
}

/** Running sandboxes of a host whose time is up. */
export async function dueOnHost(q: Queryable, hostId: string): Promise<SandboxRow[]> {
  return allRows<SandboxRow>(
    q,
    "SELECT * FROM sandboxes WHERE host_id = $1 AND state = 'running' AND expires_at <= now() ORDER BY expires_at",
    [hostId],
  );
}

/** Every running sandbox of a host (the reaper compares them with the runtime's containers). */
export async function runningOnHost(q: Queryable, hostId: string): Promise<SandboxRow[]> {
  return allRows<SandboxRow>(q, "SELECT * FROM sandboxes WHERE host_id = $1 AND state = 'running'", [hostId]);
}

export async function sandboxesByIds(q: Queryable, ids: string[]): Promise<Map<string, SandboxRow>> {
  const valid = ids.filter((id) => isUuid(id));
  if (!valid.length) return new Map();
  const rows = await allRows<SandboxRow>(q, "SELECT * FROM sandboxes WHERE id = ANY($1::uuid[])", [valid]);
  return new Map(rows.map((r) => [r.id, r]));
}
