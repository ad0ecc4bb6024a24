import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { targetSpans, type MinuteRow } from "./repo.js";

/**
 * The hourly roll-up of the edge's per-minute rows (issue 31, src/metrics runs it): hour rows in edge_hour_stats
 * (migration 074) add the minutes' counters, bytes and latency buckets; kept 90 days.
 */

const HOUR = `date_bin('1 hour', minute, timestamptz '1970-01-01 00:00:00+00')`;

/** Rolls the minutes of [from, to) (epoch ms, whole hours) into hour rows; a second run replaces them. */
export async function rollupEdgeHours(q: Queryable, from: number, to: number): Promise<number> {
  const { rowCount } = await q.query(
    `WITH m AS (
       SELECT target_kind, target_id, ${HOUR} AS hour, minute, owner_kind, owner_id, requests, status_4xx,
              status_5xx, bytes_out, latency
         FROM edge_minute_stats WHERE minute >= $1 AND minute < $2),
     totals AS (
       SELECT target_kind, target_id, hour, (array_agg(owner_kind ORDER BY minute DESC))[1] AS owner_kind,
              (array_agg(owner_id ORDER BY minute DESC))[1] AS owner_id, sum(requests) AS requests,
              sum(status_4xx) AS s4, sum(status_5xx) AS s5, sum(bytes_out) AS bytes
         FROM m GROUP BY target_kind, target_id, hour),
     buckets AS (
       SELECT target_kind, target_id, hour, array_agg(total ORDER BY i) AS latency
         FROM (SELECT m.target_kind, m.target_id, m.hour, u.i, sum(u.x)::bigint AS total
                 FROM m CROSS JOIN LATERAL unnest(m.latency) WITH ORDINALITY AS u(x, i)
                GROUP BY 1, 2, 3, 4) b
        GROUP BY target_kind, target_id, hour)
     INSERT INTO edge_hour_stats (target_kind, target_id, hour, owner_kind, owner_id, requests, status_4xx,
                                  status_5xx, bytes_out, latency)
     SELECT t.target_kind, t.target_id, t.hour, t.owner_kind, t.owner_id, t.requests, t.s4, t.s5, t.bytes,
            COALESCE(b.latency, '{}')
       FROM totals t LEFT JOIN buckets b USING (target_kind, target_id, hour)
      ORDER BY t.target_kind, t.target_id, t.hour
     ON CONFLICT (target_kind, target_id, hour) DO UPDATE SET
       owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id, requests = EXCLUDED.requests,
       status_4xx = EXCLUDED.status_4xx, status_5xx = EXCLUDED.status_5xx, bytes_out = EXCLUDED.bytes_out,
       latency = EXCLUDED.latency`,
    [new Date(from), new Date(to)],
  );
  return rowCount ?? 0;
}

/** One app's hour rows in [from, to) (epoch ms), oldest first, shaped as minute rows (`minute` is the hour). */
export const targetHours = (
  q: Queryable,
  target: { kind: string; id: string },
  from: number,
  to: number,
): Promise<MinuteRow[]> => targetSpans(q, "hour", target, from, to);

/** Each app's traffic over the last `withinMs` (the operator endpoint's gauges), by kind. */
export async function recentTraffic(
  q: Queryable,
  kinds: string[],
  withinMs: number,
): Promise<{ kind: string; id: string; owner: Owner; requests: number; status5xx: number; bytesOut: number }[]> {
  const { rows } = await q.query<{
    target_kind: string;
    target_id: string;
    owner_kind: Owner["kind"];
    owner_id: string;
    requests: string;
    s5: string;
    bytes: string;
  }>(
    `SELECT target_kind, target_id::text, max(owner_kind) AS owner_kind, max(owner_id::text) AS owner_id,
            sum(requests) AS requests, sum(status_5xx) AS s5, sum(bytes_out) AS bytes
       FROM edge_minute_stats WHERE target_kind = ANY($1::text[]) AND minute >= $2
      GROUP BY target_kind, target_id ORDER BY target_kind, target_id`,
    [kinds, new Date(Date.now() - withinMs)],
  );
  return rows.map((r) => ({
    kind: r.target_kind,
    id: r.target_id,
    owner: { kind: r.owner_kind, id: r.owner_id },
    requests: Number(r.requests),
    status5xx: Number(r.s5),
    bytesOut: Number(r.bytes),
  }));
}

/** Drops hour rows before `before` (epoch ms); returns how many went. */
export async function pruneHourStats(q: Queryable, before: number): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM edge_hour_stats WHERE hour < $1", [new Date(before)]);
  return rowCount ?? 0;
}
