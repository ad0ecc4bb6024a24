import { allRows, oneRow, type Queryable, returnedRow } from "../store/db.js";
import { countByOwner, findByRef, listByRefs, type RefLookup } from "../store/find.js";
import type { Owner } from "../kernel/owner.js";

/** The SQL of log drains: the drains, their cursors, and the edge's access lines waiting to be shipped. */
export interface DrainRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  name: string;
  destination: string;
  headers_sealed: string | null;
  headers_meta: Record<string, { fingerprint: string }>;
  source: "pods" | "edge";
  target_kind: "pod" | "group" | "site" | null;
  target_id: string | null;
  enabled: boolean;
  delivered_count: string;
  dropped_count: string;
  failed_attempts: string;
  failures_in_row: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  last_success_at: Date | null;
  created_at: Date;
  updated_at: Date;
  removed_at: Date | null;
}

export const HEADERS_COLUMN = "log_drains.headers_sealed";

export type NewDrain = Pick<
  DrainRow,
  | "id"
  | "owner_kind"
  | "owner_id"
  | "account_id"
  | "name"
  | "destination"
  | "headers_sealed"
  | "headers_meta"
  | "source"
  | "target_kind"
  | "target_id"
>;

export async function insertDrain(q: Queryable, d: NewDrain): Promise<DrainRow> {
  return returnedRow<DrainRow>(
    q,
    `INSERT INTO log_drains (id, owner_kind, owner_id, account_id, name, destination, headers_sealed, headers_meta,
                             source, target_kind, target_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      d.id,
      d.owner_kind,
      d.owner_id,
      d.account_id,
      d.name,
      d.destination,
      d.headers_sealed,
      JSON.stringify(d.headers_meta),
      d.source,
      d.target_kind,
      d.target_id,
    ],
  );
}

/** log_drains as the shared lookups read it: an owner's drains not removed, found by id only */
const DRAINS: RefLookup = { table: "log_drains", refColumn: null, where: "removed_at IS NULL" };

export const countDrains = (q: Queryable, owner: Owner): Promise<number> => countByOwner(q, DRAINS, owner);

export const listDrains = (q: Queryable, owner: Owner): Promise<DrainRow[]> =>
  listByRefs<DrainRow>(q, DRAINS, owner, null, "created_at, id");

export const getDrain = (q: Queryable, owner: Owner, id: string, lock = false): Promise<DrainRow | null> =>
  findByRef<DrainRow>(q, DRAINS, owner, id, { forUpdate: lock });

export async function drainById(q: Queryable, id: string): Promise<DrainRow | null> {
  return oneRow<DrainRow>(q, `SELECT * FROM log_drains WHERE id = $1 AND removed_at IS NULL`, [id]);
}

export interface DrainChange {
  name?: string;
  destination?: string;
  headers?: { sealed: string | null; meta: Record<string, { fingerprint: string }> };
  enabled?: boolean;
}

/** A changed destination or a re-enabled drain starts without the old failure streak and back-off. */
export async function updateDrain(q: Queryable, id: string, c: DrainChange): Promise<DrainRow> {
  const fresh = c.destination !== undefined || c.enabled === true;
  return returnedRow<DrainRow>(
    q,
    `UPDATE log_drains SET
       name = COALESCE($2, name),
       destination = COALESCE($3, destination),
       headers_sealed = CASE WHEN $4::boolean THEN $5 ELSE headers_sealed END,
       headers_meta = CASE WHEN $4::boolean THEN $6::jsonb ELSE headers_meta END,
       enabled = COALESCE($7, enabled),
       failures_in_row = CASE WHEN $8::boolean THEN 0 ELSE failures_in_row END,
       next_attempt_at = CASE WHEN $8::boolean THEN NULL ELSE next_attempt_at END,
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [
      id,
      c.name ?? null,
      c.destination ?? null,
      c.headers !== undefined,
      c.headers?.sealed ?? null,
      JSON.stringify(c.headers?.meta ?? {}),
      c.enabled ?? null,
      fresh,
    ],
  );
}

export async function removeDrain(q: Queryable, id: string): Promise<void> {
  await q.query(`UPDATE log_drains SET removed_at = now(), enabled = false, updated_at = now() WHERE id = $1`, [id]);
  await q.query(`DELETE FROM log_drain_cursors WHERE drain_id = $1`, [id]);
}

/** Every enabled drain of a source, platform-wide (the shippers' pass; a handful per owner at most). */
export async function activeDrains(q: Queryable, source: DrainRow["source"]): Promise<DrainRow[]> {
  return allRows<DrainRow>(
    q,
    `SELECT * FROM log_drains WHERE source = $1 AND enabled AND removed_at IS NULL ORDER BY id`,
    [source],
  );
}

export interface CursorRow {
  drain_id: string;
  source_id: string;
  at_ns: string;
  at_count: number;
  edge_tx: string;
  edge_seq: string;
}

/**
 * Claims the drain's cursor of one source for `claimSeconds` (made at `startNs` on first use); null while another
 * sender holds it. A claim that lapsed (its sender was killed) is taken over: its batch is sent again.
 */
export async function claimCursor(
  q: Queryable,
  drainId: string,
  sourceId: string,
  claimSeconds: number,
  startNs: bigint,
): Promise<CursorRow | null> {
  return oneRow<CursorRow>(
    q,
    `INSERT INTO log_drain_cursors (drain_id, source_id, at_ns, claimed_until)
     SELECT $1, $2, $3, now() + make_interval(secs => $4) WHERE EXISTS (SELECT 1 FROM log_drains WHERE id = $1)
     ON CONFLICT (drain_id, source_id) DO UPDATE SET claimed_until = EXCLUDED.claimed_until
       WHERE log_drain_cursors.claimed_until IS NULL OR log_drain_cursors.claimed_until < now()
     RETURNING drain_id, source_id, at_ns::text, at_count, edge_tx::text, edge_seq::text`,
    [drainId, sourceId, startNs.toString(), claimSeconds],
  );
}

export async function releaseCursor(q: Queryable, drainId: string, sourceId: string): Promise<void> {
  await q.query(`UPDATE log_drain_cursors SET claimed_until = NULL WHERE drain_id = $1 AND source_id = $2`, [
    drainId,
    sourceId,
  ]);
}

export async function movePodCursor(
  q: Queryable,
  drainId: string,
  sourceId: string,
  atNs: bigint,
  atCount: number,
): Promise<void> {
  await q.query(
    `UPDATE log_drain_cursors SET at_ns = $3, at_count = $4, updated_at = now() WHERE drain_id = $1 AND source_id = $2`,
    [drainId, sourceId, atNs.toString(), atCount],
  );
}

export async function moveEdgeCursor(q: Queryable, drainId: string, tx: string, seq: string): Promise<void> {
  await q.query(
    `UPDATE log_drain_cursors SET edge_tx = $2::xid8, edge_seq = $3, updated_at = now()
      WHERE drain_id = $1 AND source_id = 'edge'`,
    [drainId, tx, seq],
  );
}

export async function recordSuccess(q: Queryable, drainId: string, delivered: number): Promise<void> {
  await q.query(
    `UPDATE log_drains SET delivered_count = delivered_count + $2, failures_in_row = 0, next_attempt_at = NULL,
            last_success_at = now() WHERE id = $1`,
    [drainId, delivered],
  );
}

/** One failed send: counted, the error kept, the next attempt after the back-off the caller computed. */
export async function recordFailure(q: Queryable, drainId: string, error: string, retryMs: number): Promise<number> {
  const { rows } = await q.query<{ failures_in_row: number }>(
    `UPDATE log_drains SET failed_attempts = failed_attempts + 1, failures_in_row = failures_in_row + 1,
            last_error = $2, last_error_at = now(), next_attempt_at = now() + make_interval(secs => $3 / 1000.0)
      WHERE id = $1 RETURNING failures_in_row`,
    [drainId, error.slice(0, 500), retryMs],
  );
  return rows[0]?.failures_in_row ?? 0;
}

export async function addDropped(q: Queryable, drainId: string, n: number): Promise<void> {
  if (n > 0) await q.query(`UPDATE log_drains SET dropped_count = dropped_count + $2 WHERE id = $1`, [drainId, n]);
}

// --- the edge's access lines ---

/** What the edge collects lines for: apps some enabled edge drain names, and owners with a drain on all their apps. */
export async function edgeSubscriptions(q: Queryable): Promise<{ targets: string[]; owners: string[] }> {
  const { rows } = await q.query<{ target_id: string | null; owner_id: string }>(
    `SELECT DISTINCT target_id::text, owner_id::text FROM log_drains
      WHERE source = 'edge' AND enabled AND removed_at IS NULL`,
  );
  return {
    targets: rows.filter((r) => r.target_id).map((r) => r.target_id!),
    owners: rows.filter((r) => !r.target_id).map((r) => r.owner_id),
  };
}

export interface EdgeLine {
  targetKind: string;
  targetId: string;
  owner: Owner;
  at: Date;
  line: Record<string, unknown>;
}

/** One flush of an edge process: every line in one statement. */
export async function insertEdgeLines(q: Queryable, lines: EdgeLine[]): Promise<void> {
  if (!lines.length) return;
  await q.query(
    `INSERT INTO drain_edge_lines (target_kind, target_id, owner_kind, owner_id, at, line)
     SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::uuid[], $5::timestamptz[], $6::jsonb[])`,
    [
      lines.map((l) => l.targetKind),
      lines.map((l) => l.targetId),
      lines.map((l) => l.owner.kind),
      lines.map((l) => l.owner.id),
      lines.map((l) => l.at),
      lines.map((l) => JSON.stringify(l.line)),
    ],
  );
}

/** Lines the edge dropped (its buffer full) count on every edge drain that would have shipped them. */
export async function addEdgeDropped(
  q: Queryable,
  drops: { targetId: string; ownerKind: string; ownerId: string; n: number }[],
): Promise<void> {
  if (!drops.length) return;
  await q.query(
    `UPDATE log_drains d SET dropped_count = d.dropped_count + x.n
       FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::bigint[]) AS x(target_id, owner_kind, owner_id, n)
      WHERE d.source = 'edge' AND d.enabled AND d.removed_at IS NULL
        AND d.owner_kind = x.owner_kind AND d.owner_id = x.owner_id
        AND (d.target_id IS NULL OR d.target_id = x.target_id)`,
    [drops.map((d) => d.targetId), drops.map((d) => d.ownerKind), drops.map((d) => d.ownerId), drops.map((d) => d.n)],
  );
}

export interface EdgeLineRow {
  tx: string;
  seq: string;
  at: Date;
  line: Record<string, unknown>;
}

// $3, $4: the app or the owner; $5: the drain's creation (it ships nothing from before it existed)
const edgeWhere = (d: DrainRow) =>
  (d.target_id ? `target_kind = $3 AND target_id = $4::uuid` : `owner_kind = $3 AND owner_id = $4::uuid`) +
  ` AND at >= $5`;
const edgeParams = (d: DrainRow) => [
  ...(d.target_id ? [d.target_kind, d.target_id] : [d.owner_kind, d.owner_id]),
  d.created_at,
];

/**
 * The drain's next lines after its cursor, in (tx, seq) order, stopping before the first row of a transaction
 * that may still be running beside an older one (the order is final only below the snapshot's xmin).
 */
export async function readEdgeLines(
  q: Queryable,
  d: DrainRow,
  after: { tx: string; seq: string },
  limit: number,
): Promise<EdgeLineRow[]> {
  const { rows } = await q.query<EdgeLineRow & { final: boolean }>(
    `WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
     SELECT l.tx::text, l.seq::text, l.at, l.line, l.tx < s.xmin AS final FROM drain_edge_lines l, s
      WHERE (tx, seq) > ($1::xid8, $2::bigint) AND ${edgeWhere(d)}
      ORDER BY l.tx, l.seq LIMIT $6`,
    [after.tx, after.seq, ...edgeParams(d), limit],
  );
  const held = rows.findIndex((r) => !r.final);
  return (held < 0 ? rows : rows.slice(0, held)).map(({ final: _, ...r }) => r);
}

/**
 * A drain this far behind drops what is older than `before`: the position of the newest such line after the
 * cursor, and how many lines lie up to it (all of them are skipped, so all count as dropped).
 */
export async function staleEdgeLines(
  q: Queryable,
  d: DrainRow,
  after: { tx: string; seq: string },
  before: Date,
): Promise<{ n: number; tx: string; seq: string } | null> {
  return oneRow<{ n: number; tx: string; seq: string }>(
    q,
    `WITH m AS (SELECT tx, seq FROM drain_edge_lines
                 WHERE (tx, seq) > ($1::xid8, $2::bigint) AND ${edgeWhere(d)} AND at < $6
                 ORDER BY tx DESC, seq DESC LIMIT 1)
     SELECT (SELECT count(*) FROM drain_edge_lines
              WHERE (tx, seq) > ($1::xid8, $2::bigint) AND (tx, seq) <= (m.tx, m.seq) AND ${edgeWhere(d)})::int AS n,
            m.tx::text, m.seq::text
       FROM m`,
    [after.tx, after.seq, ...edgeParams(d), before],
  );
}

/** The edge's lines older than `before`: every drain has shipped or dropped them by then. */
export async function pruneEdgeLines(q: Queryable, before: Date): Promise<number> {
  const { rowCount } = await q.query(`DELETE FROM drain_edge_lines WHERE at < $1`, [before]);
  return rowCount ?? 0;
}
