import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import type { Counts } from "./counts.js";

/** One app's counts for one UTC day, as a flush adds them or a read returns them (migration 021). */
export interface StatsRow extends Counts {
  kind: string;
  id: string;
  /** YYYY-MM-DD, UTC */
  day: string;
  owner: Owner;
  /** epoch ms of the last request counted (scale-to-zero's idle clock, src/apps/idle); absent: not known */
  lastAt?: number;
}

/** One app's counts for one UTC minute (migration 066; issue 31's per-minute metrics, read by src/metrics). */
export interface MinuteRow extends Counts {
  kind: string;
  id: string;
  /** epoch ms of the minute's start */
  minute: number;
  owner: Owner;
}

/** the counter columns of every edge statistics table (site_stats, edge_minute_stats, edge_hour_stats) */
interface CountColumns {
  requests: string | number;
  status_4xx: string | number;
  status_5xx: string | number;
  bytes_out: string | number;
  latency: (string | number)[];
}

/** A row's counters; sums arrive as numeric text and int8[] elements as text. */
const countsFromDb = (r: CountColumns): Counts => ({
  requests: Number(r.requests),
  status4xx: Number(r.status_4xx),
  status5xx: Number(r.status_5xx),
  bytesOut: Number(r.bytes_out),
  latency: r.latency.map(Number),
});

interface DbRow extends CountColumns {
  target_kind: string;
  target_id: string;
  day: string;
  owner_kind: Owner["kind"];
  owner_id: string;
}

const fromDb = (r: DbRow): StatsRow => ({
  kind: r.target_kind,
  id: r.target_id,
  day: r.day,
  owner: { kind: r.owner_kind, id: r.owner_id },
  ...countsFromDb(r),
});

const compare = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A flush's rows in key order (two edge processes flushing the same apps at once lock them in the same order: no
 * deadlock), with the arrays the upserts unnest: kind, id, span, owner kind, owner id, requests, 4xx, 5xx, bytes
 * out, latency (as int8[] literals).
 */
function flushColumns<R extends Counts & { kind: string; id: string; owner: Owner }>(
  rows: R[],
  span: (r: R) => string | number,
  spanParam: (r: R) => unknown = span,
): { sorted: R[]; params: unknown[][] } {
  const sorted = [...rows].sort((a, b) => compare(a.kind, b.kind) || compare(a.id, b.id) || compare(span(a), span(b)));
  return {
    sorted,
    params: [
      sorted.map((r) => r.kind),
      sorted.map((r) => r.id),
      sorted.map(spanParam),
      sorted.map((r) => r.owner.kind),
      sorted.map((r) => r.owner.id),
      sorted.map((r) => r.requests),
      sorted.map((r) => r.status4xx),
      sorted.map((r) => r.status5xx),
      sorted.map((r) => r.bytesOut),
      sorted.map((r) => `{${r.latency.join(",")}}`),
    ],
  };
}

const COLUMNS = `target_kind, target_id::text, day::text, owner_kind, owner_id::text, requests, status_4xx, status_5xx,
  bytes_out, latency`;

/**
 * Adds a flush's counts in one statement, whatever the number of rows: counters add, latency buckets add
 * element-wise, the owner follows the newest flush (an app moved to another owner). Rows go in key order, so
 * two edge processes flushing the same apps at once lock them in the same order (no deadlock).
 */
export async function addStats(q: Queryable, rows: StatsRow[]): Promise<void> {
  if (!rows.length) return;
  const { sorted, params } = flushColumns(rows, (r) => r.day);
  await q.query(
    `INSERT INTO site_stats AS s (target_kind, target_id, day, owner_kind, owner_id, requests, status_4xx, status_5xx,
                                   bytes_out, latency, last_request_at)
     SELECT kind, id, day, owner_kind, owner_id, requests, s4, s5, bytes, latency::bigint[], last_at
       FROM unnest($1::text[], $2::uuid[], $3::date[], $4::text[], $5::uuid[], $6::bigint[], $7::bigint[],
                   $8::bigint[], $9::bigint[], $10::text[], $11::timestamptz[]) WITH ORDINALITY
            AS u(kind, id, day, owner_kind, owner_id, requests, s4, s5, bytes, latency, last_at, n)
      ORDER BY n
     ON CONFLICT (target_kind, target_id, day) DO UPDATE SET
       owner_kind = EXCLUDED.owner_kind,
       owner_id = EXCLUDED.owner_id,
       requests = s.requests + EXCLUDED.requests,
       status_4xx = s.status_4xx + EXCLUDED.status_4xx,
       status_5xx = s.status_5xx + EXCLUDED.status_5xx,
       bytes_out = s.bytes_out + EXCLUDED.bytes_out,
       latency = (SELECT array_agg(COALESCE(a, 0) + COALESCE(b, 0) ORDER BY i)
                    FROM unnest(s.latency, EXCLUDED.latency) WITH ORDINALITY AS h(a, b, i)),
       last_request_at = GREATEST(s.last_request_at, EXCLUDED.last_request_at),
       updated_at = now()`,
    [...params, sorted.map((r) => (r.lastAt === undefined ? null : new Date(r.lastAt)))],
  );
}

/** One app's days from `from` to `to` (inclusive, YYYY-MM-DD); quiet days have no row. */
export async function targetDaily(
  q: Queryable,
  target: { kind: string; id: string },
  from: string,
  to: string,
): Promise<StatsRow[]> {
  const { rows } = await q.query<DbRow>(
    `SELECT ${COLUMNS} FROM site_stats
      WHERE target_kind = $1 AND target_id = $2 AND day BETWEEN $3::date AND $4::date ORDER BY day`,
    [target.kind, target.id, from, to],
  );
  return rows.map(fromDb);
}

/**
 * Every app of an owner, day by day from `from` to `to` (inclusive), optionally only some kinds: one range of the
 * owner index. For organizations (spec `GET /v1/org/stats/sites`, `/v1/org/stats/sites/{slug}`): an organization
 * owner's apps in one query; the caller names the apps (kernel.findInstance) and sums or charts them
 * (histogram.ts `addInto`/`percentile` for response times across apps). Rows are in (kind, id, day) order.
 */
export async function ownerDaily(
  q: Queryable,
  owner: Owner,
  from: string,
  to: string,
  kinds: string[] | null = null,
): Promise<StatsRow[]> {
  const { rows } = await q.query<DbRow>(
    `SELECT ${COLUMNS} FROM site_stats
      WHERE owner_kind = $1 AND owner_id = $2 AND day BETWEEN $3::date AND $4::date
        AND ($5::text[] IS NULL OR target_kind = ANY($5::text[]))
      ORDER BY target_kind, target_id, day`,
    [owner.kind, owner.id, from, to, kinds],
  );
  return rows.map(fromDb);
}

/**
 * The time of the last request the edge stored for each of these apps (kind, id), over every day kept: the newest
 * day's row of each, by the primary key. Apps without a stored request are absent from the map.
 */
export async function lastRequests(q: Queryable, targets: { kind: string; id: string }[]): Promise<Map<string, Date>> {
  if (!targets.length) return new Map();
  const { rows } = await q.query<{ kind: string; id: string; at: Date }>(
    `SELECT t.kind, t.id::text, l.at FROM unnest($1::text[], $2::uuid[]) AS t(kind, id)
       CROSS JOIN LATERAL (SELECT max(last_request_at) AS at FROM (
         SELECT last_request_at FROM site_stats s WHERE s.target_kind = t.kind AND s.target_id = t.id
          ORDER BY day DESC LIMIT 2) d) l
      WHERE l.at IS NOT NULL`,
    [targets.map((t) => t.kind), targets.map((t) => t.id)],
  );
  return new Map(rows.map((r) => [`${r.kind}:${r.id}`, r.at]));
}

/** Drops days before `before` (YYYY-MM-DD); returns how many rows went. */
export async function pruneStats(q: Queryable, before: string): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM site_stats WHERE day < $1::date", [before]);
  return rowCount ?? 0;
}

/**
 * Adds a flush's per-minute counts in one statement, like addStats (counters and buckets add; key order, so two
 * edge processes lock rows in the same order).
 */
export async function addMinuteStats(q: Queryable, rows: MinuteRow[]): Promise<void> {
  if (!rows.length) return;
  const { params } = flushColumns(
    rows,
    (r) => r.minute,
    (r) => new Date(r.minute),
  );
  await q.query(
    `INSERT INTO edge_minute_stats AS s (target_kind, target_id, minute, owner_kind, owner_id, requests, status_4xx,
                                          status_5xx, latency, bytes_out)
     SELECT kind, id, minute, owner_kind, owner_id, requests, s4, s5, latency::bigint[], bytes
       FROM unnest($1::text[], $2::uuid[], $3::timestamptz[], $4::text[], $5::uuid[], $6::bigint[], $7::bigint[],
                   $8::bigint[], $9::bigint[], $10::text[]) WITH ORDINALITY
            AS u(kind, id, minute, owner_kind, owner_id, requests, s4, s5, bytes, latency, n)
      ORDER BY n
     ON CONFLICT (target_kind, target_id, minute) DO UPDATE SET
       owner_kind = EXCLUDED.owner_kind,
       owner_id = EXCLUDED.owner_id,
       requests = s.requests + EXCLUDED.requests,
       status_4xx = s.status_4xx + EXCLUDED.status_4xx,
       status_5xx = s.status_5xx + EXCLUDED.status_5xx,
       bytes_out = s.bytes_out + EXCLUDED.bytes_out,
       latency = (SELECT array_agg(COALESCE(a, 0) + COALESCE(b, 0) ORDER BY i)
                    FROM unnest(s.latency, EXCLUDED.latency) WITH ORDINALITY AS h(a, b, i))`,
    params,
  );
}

/**
 * One app's rows in [from, to) (epoch ms) of the minute table, or of the hourly roll-up's (series-repo.ts; `minute`
 * is then the hour), oldest first; quiet spans have no row.
 */
export async function targetSpans(
  q: Queryable,
  span: "minute" | "hour",
  target: { kind: string; id: string },
  from: number,
  to: number,
): Promise<MinuteRow[]> {
  const table = span === "minute" ? "edge_minute_stats" : "edge_hour_stats";
  const { rows } = await q.query<CountColumns & { at: Date; owner_kind: Owner["kind"]; owner_id: string }>(
    `SELECT ${span} AS at, owner_kind, owner_id::text, requests, status_4xx, status_5xx, bytes_out, latency
       FROM ${table}
      WHERE target_kind = $1 AND target_id = $2 AND ${span} >= $3 AND ${span} < $4 ORDER BY ${span}`,
    [target.kind, target.id, new Date(from), new Date(to)],
  );
  return rows.map((r) => ({
    kind: target.kind,
    id: target.id,
    minute: r.at.getTime(),
    owner: { kind: r.owner_kind, id: r.owner_id },
    ...countsFromDb(r),
  }));
}

/** One app's minutes in [from, to) (epoch ms), oldest first; quiet minutes have no row. */
export const targetMinutes = (
  q: Queryable,
  target: { kind: string; id: string },
  from: number,
  to: number,
): Promise<MinuteRow[]> => targetSpans(q, "minute", target, from, to);

/**
 * Every minute row of an owner's apps and sites in [from, to) (epoch ms): the owner-wide figures of alert rules
 * (src/alerts). Bounded by the owner's targets × the window's minutes.
 */
export async function ownerMinutes(q: Queryable, owner: Owner, from: number, to: number): Promise<MinuteRow[]> {
  const { rows } = await q.query<CountColumns & { target_kind: string; target_id: string; minute: Date }>(
    `SELECT target_kind, target_id::text, minute, requests, status_4xx, status_5xx, latency, bytes_out
       FROM edge_minute_stats
      WHERE owner_kind = $1 AND owner_id = $2 AND minute >= $3 AND minute < $4 ORDER BY minute`,
    [owner.kind, owner.id, new Date(from), new Date(to)],
  );
  return rows.map((r) => ({
    kind: r.target_kind,
    id: r.target_id,
    minute: r.minute.getTime(),
    owner,
    ...countsFromDb(r),
  }));
}

/** Drops minutes before `before` (epoch ms); returns how many rows went. */
export async function pruneMinuteStats(q: Queryable, before: number): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM edge_minute_stats WHERE minute < $1", [new Date(before)]);
  return rowCount ?? 0;
}
