import { randomUUID } from "node:crypto";
import { oneRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/**
 * The outbox's SQL. A position is (tx, seq): the inserting transaction's id, then the row's sequence number.
 * Forward reads take only rows of transactions older than every transaction still running, so once a position was
 * handed out no row can later appear before it (a plain sequence would let a slow transaction commit behind it).
 */
export interface EventRow {
  seq: number;
  id: string;
  tx: string;
  type: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  resource_kind: string;
  resource_id: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface Position {
  tx: string;
  seq: number;
}

export const START: Position = { tx: "0", seq: 0 };

export interface NewEvent {
  type: string;
  owner: Owner;
  resource: { kind: string; id: string };
  data: Record<string, unknown>;
}

export async function insertEvent(q: Queryable, e: NewEvent): Promise<{ id: string; seq: number }> {
  const id = randomUUID();
  const { rows } = await q.query<{ seq: number }>(
    `INSERT INTO events (id, type, owner_kind, owner_id, resource_kind, resource_id, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq`,
    [id, e.type, e.owner.kind, e.owner.id, e.resource.kind, e.resource.id, JSON.stringify(e.data)],
  );
  return { id, seq: rows[0].seq };
}

export interface EventFilter {
  /** exact types; prefixes (`database.`) match by LIKE */
  types?: string[] | null;
  resourceKind?: string | null;
  resourceId?: string | null;
}

function filterSql(f: EventFilter, params: unknown[]): string {
  let sql = "";
  if (f.types?.length) {
    const exact = f.types.filter((t) => !t.endsWith(".*") && t !== "*");
    const prefixes = f.types
      .filter((t) => t.endsWith(".*"))
      .map((t) => t.slice(0, -1).replace(/[%_\\]/g, "\\$&") + "%");
    if (!f.types.includes("*")) {
      params.push(exact, prefixes);
      sql += ` AND (type = ANY($${params.length - 1}) OR type LIKE ANY($${params.length}))`;
    }
  }
  if (f.resourceKind) {
    params.push(f.resourceKind);
    sql += ` AND resource_kind = $${params.length}`;
  }
  if (f.resourceId) {
    params.push(f.resourceId);
    sql += ` AND resource_id = $${params.length}`;
  }
  return sql;
}

/** Rows of these owners (a caller sees its own, a partner also its children's); one owner keeps the simple form. */
function ownersSql(owners: readonly Owner[], params: unknown[]): string {
  if (owners.length === 1) {
    params.push(owners[0].kind, owners[0].id);
    return `owner_kind = $${params.length - 1} AND owner_id = $${params.length}::uuid`;
  }
  params.push(
    owners.map((o) => o.kind),
    owners.map((o) => o.id),
  );
  return `(owner_kind, owner_id) IN (SELECT k, i FROM unnest($${params.length - 1}::text[], $${params.length}::uuid[]) AS u(k, i))`;
}

/** The owners' events, newest first, older than `before` (an event's position) when given. */
export async function listEvents(
  q: Queryable,
  owners: readonly Owner[],
  f: EventFilter,
  before: Position | null,
  limit: number,
): Promise<EventRow[]> {
  const params: unknown[] = [];
  let sql = `SELECT * FROM events WHERE ${ownersSql(owners, params)}`;
  if (before) {
    params.push(before.tx, before.seq);
    sql += ` AND (tx, seq) < ($${params.length - 1}::xid8, $${params.length}::bigint)`;
  }
  sql += filterSql(f, params);
  params.push(limit);
  sql += ` ORDER BY tx DESC, seq DESC LIMIT $${params.length}`;
  return (await q.query<EventRow>(sql, params)).rows;
}

/**
 * Events after a position, oldest first, whose order is final (see the top); `owner` null reads every owner's
 * (the webhook dispatcher). `held` says whether committed rows wait behind a running transaction (read again soon).
 */
export async function readAfter(
  q: Queryable,
  owners: readonly Owner[] | null,
  after: Position,
  limit: number,
  f: EventFilter = {},
): Promise<{ rows: EventRow[]; held: boolean }> {
  const params: unknown[] = [after.tx, after.seq];
  let where = `(tx, seq) > ($1::xid8, $2::bigint)`;
  if (owners) where += ` AND ${ownersSql(owners, params)}`;
  where += filterSql(f, params);
  params.push(limit);
  const { rows } = await q.query<EventRow & { final: boolean }>(
    `WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
     SELECT e.*, e.tx < s.xmin AS final FROM events e, s WHERE ${where}
     ORDER BY tx, seq LIMIT $${params.length}`,
    params,
  );
  const firstHeld = rows.findIndex((r) => !r.final);
  const final = firstHeld < 0 ? rows : rows.slice(0, firstHeld);
  return { rows: final.map(({ final: _, ...r }) => r), held: firstHeld >= 0 };
}

/** The position of one of the owners' events (a cursor or Last-Event-ID); null when it is none of theirs. */
export async function positionOf(q: Queryable, owners: readonly Owner[], id: string): Promise<Position | null> {
  const params: unknown[] = [id];
  return oneRow<Position>(q, `SELECT tx, seq FROM events WHERE id = $1 AND ${ownersSql(owners, params)}`, params);
}

/** The newest final position: a stream opened without Last-Event-ID starts here (only what happens next). */
export async function headPosition(q: Queryable): Promise<Position> {
  const { rows } = await q.query<Position>(
    `SELECT tx, seq FROM events WHERE tx < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY tx DESC, seq DESC LIMIT 1`,
  );
  return rows[0] ?? START;
}

/**
 * Retention, inside the caller's transaction: deletes up to `limit` of the oldest events created before `before`,
 * with their deliveries and attempts (a delivery never outlives its event). Answers how many events went.
 */
export async function deleteEventsBefore(q: Queryable, before: Date, limit: number): Promise<number> {
  const { rows } = await q.query<{ seq: number }>(
    `SELECT seq FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [before, limit],
  );
  if (!rows.length) return 0;
  const seqs = rows.map((r) => r.seq);
  await q.query(
    `DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_seq = ANY($1::bigint[]))`,
    [seqs],
  );
  await q.query(`DELETE FROM webhook_deliveries WHERE event_seq = ANY($1::bigint[])`, [seqs]);
  await q.query(`DELETE FROM events WHERE seq = ANY($1::bigint[])`, [seqs]);
  return seqs.length;
}

export async function eventBySeq(q: Queryable, seq: number): Promise<EventRow | null> {
  return oneRow<EventRow>(q, `SELECT * FROM events WHERE seq = $1`, [seq]);
}
