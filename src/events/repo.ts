import { randomUUID } from "node:crypto";
import type { Queryable } from "../store/db.js";
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

/** One owner's events, newest first, older than `before` (an event's position) when given. */
export async function listEvents(
  q: Queryable,
  owner: Owner,
  f: EventFilter,
  before: Position | null,
  limit: number,
): Promise<EventRow[]> {
  const params: unknown[] = [owner.kind, owner.id];
  let sql = `SELECT * FROM events WHERE owner_kind = $1 AND owner_id = $2`;
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
  owner: Owner | null,
  after: Position,
  limit: number,
  f: EventFilter = {},
): Promise<{ rows: EventRow[]; held: boolean }> {
  const params: unknown[] = [after.tx, after.seq];
  let where = `(tx, seq) > ($1::xid8, $2::bigint)`;
  if (owner) {
    params.push(owner.kind, owner.id);
    where += ` AND owner_kind = $3 AND owner_id = $4`;
  }
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

/** The position of one of the owner's events (a cursor or Last-Event-ID); null when it is not the owner's. */
export async function positionOf(q: Queryable, owner: Owner | null, id: string): Promise<Position | null> {
  const { rows } = await q.query<Position>(
    `SELECT tx, seq FROM events WHERE id = $1 AND ($2::text IS NULL OR (owner_kind = $2 AND owner_id = $3::uuid))`,
    [id, owner?.kind ?? null, owner?.id ?? null],
  );
  return rows[0] ?? null;
}

/** The newest final position: a stream opened without Last-Event-ID starts here (only what happens next). */
export async function headPosition(q: Queryable): Promise<Position> {
  const { rows } = await q.query<Position>(
    `SELECT tx, seq FROM events WHERE tx < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY tx DESC, seq DESC LIMIT 1`,
  );
  return rows[0] ?? START;
}

export async function eventBySeq(q: Queryable, seq: number): Promise<EventRow | null> {
  const { rows } = await q.query<EventRow>(`SELECT * FROM events WHERE seq = $1`, [seq]);
  return rows[0] ?? null;
}
