import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/** One pod's runtime figures for one minute (migration 067). */
export interface PodSample {
  podId: string;
  /** epoch ms of the minute's start */
  minute: number;
  owner: Owner;
  cpuPercent: number | null;
  memoryBytes: number | null;
  memoryLimitBytes: number | null;
  restartCount: number;
  netInBytes: number | null;
  netOutBytes: number | null;
  /** the pod group it belonged to at the sample (migration 074) */
  groupId?: string | null;
}

/** Stores one sampling pass in one statement; a second pass in the same minute replaces the first (the newer wins). */
export async function addSamples(q: Queryable, rows: PodSample[]): Promise<void> {
  if (!rows.length) return;
  const sorted = [...rows].sort((a, b) => (a.podId < b.podId ? -1 : a.podId > b.podId ? 1 : a.minute - b.minute));
  await q.query(
    `INSERT INTO pod_samples (pod_id, minute, owner_kind, owner_id, cpu_percent, memory_bytes, memory_limit_bytes,
                              restart_count, net_in_bytes, net_out_bytes, group_id)
     SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::uuid[], $5::float8[], $6::bigint[],
                          $7::bigint[], $8::int[], $9::bigint[], $10::bigint[], $11::uuid[])
     ON CONFLICT (pod_id, minute) DO UPDATE SET
       owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id,
       cpu_percent = COALESCE(EXCLUDED.cpu_percent, pod_samples.cpu_percent),
       memory_bytes = COALESCE(EXCLUDED.memory_bytes, pod_samples.memory_bytes),
       memory_limit_bytes = COALESCE(EXCLUDED.memory_limit_bytes, pod_samples.memory_limit_bytes),
       restart_count = EXCLUDED.restart_count,
       net_in_bytes = COALESCE(EXCLUDED.net_in_bytes, pod_samples.net_in_bytes),
       net_out_bytes = COALESCE(EXCLUDED.net_out_bytes, pod_samples.net_out_bytes),
       group_id = EXCLUDED.group_id`,
    [
      sorted.map((r) => r.podId),
      sorted.map((r) => new Date(r.minute)),
      sorted.map((r) => r.owner.kind),
      sorted.map((r) => r.owner.id),
      sorted.map((r) => r.cpuPercent),
      sorted.map((r) => r.memoryBytes),
      sorted.map((r) => r.memoryLimitBytes),
      sorted.map((r) => r.restartCount),
      sorted.map((r) => r.netInBytes),
      sorted.map((r) => r.netOutBytes),
      sorted.map((r) => r.groupId ?? null),
    ],
  );
}

interface DbSample {
  pod_id: string;
  minute: Date;
  owner_kind: Owner["kind"];
  owner_id: string;
  cpu_percent: number | null;
  memory_bytes: string | null;
  memory_limit_bytes: string | null;
  restart_count: number;
  net_in_bytes: string | null;
  net_out_bytes: string | null;
}

const num = (v: string | null): number | null => (v === null ? null : Number(v));
const fromDb = (r: DbSample): PodSample => ({
  podId: r.pod_id,
  minute: r.minute.getTime(),
  owner: { kind: r.owner_kind, id: r.owner_id },
  cpuPercent: r.cpu_percent,
  memoryBytes: num(r.memory_bytes),
  memoryLimitBytes: num(r.memory_limit_bytes),
  restartCount: r.restart_count,
  netInBytes: num(r.net_in_bytes),
  netOutBytes: num(r.net_out_bytes),
});

const COLUMNS = `pod_id::text, minute, owner_kind, owner_id::text, cpu_percent, memory_bytes, memory_limit_bytes,
  restart_count, net_in_bytes, net_out_bytes`;

/** One pod's samples in [from, to) (epoch ms), plus the last one before `from` (restarts count from it). */
export async function podSamples(q: Queryable, podId: string, from: number, to: number): Promise<PodSample[]> {
  const { rows } = await q.query<DbSample>(
    `(SELECT ${COLUMNS} FROM pod_samples WHERE pod_id = $1 AND minute < $2 ORDER BY minute DESC LIMIT 1)
     UNION ALL
     (SELECT ${COLUMNS} FROM pod_samples WHERE pod_id = $1 AND minute >= $2 AND minute < $3)
     ORDER BY minute`,
    [podId, new Date(from), new Date(to)],
  );
  return rows.map(fromDb);
}

/**
 * Samples in [from, to) (epoch ms) of the given pods, or of every pod of an owner: alert rules' figures (src/alerts).
 * Ordered by pod, then minute.
 */
export async function samplesOf(
  q: Queryable,
  who: { podIds: string[] } | { owner: Owner },
  from: number,
  to: number,
): Promise<PodSample[]> {
  const byPods = "podIds" in who;
  const { rows } = await q.query<DbSample>(
    `SELECT ${COLUMNS} FROM pod_samples
      WHERE ${byPods ? "pod_id = ANY($1::uuid[])" : "owner_kind = $1 AND owner_id = $4::uuid"}
        AND minute >= $2 AND minute < $3
      ORDER BY pod_id, minute`,
    byPods ? [who.podIds, new Date(from), new Date(to)] : [who.owner.kind, new Date(from), new Date(to), who.owner.id],
  );
  return rows.map(fromDb);
}

/** Each pod's newest sample within the last `withinMs` (the operator endpoint's gauges). */
export async function latestSamples(q: Queryable, withinMs: number): Promise<PodSample[]> {
  const { rows } = await q.query<DbSample>(
    `SELECT DISTINCT ON (pod_id) ${COLUMNS} FROM pod_samples WHERE minute >= $1 ORDER BY pod_id, minute DESC`,
    [new Date(Date.now() - withinMs)],
  );
  return rows.map(fromDb);
}

/** Jobs waiting or due for a retry, per queue (pg-boss's table), for the operator endpoint. */
export async function jobQueueDepth(q: Queryable): Promise<{ queue: string; waiting: number }[]> {
  const { rows } = await q.query<{ name: string; n: string }>(
    `SELECT name, count(*) AS n FROM pgboss.job WHERE state IN ('created', 'retry') GROUP BY name ORDER BY name`,
  );
  return rows.map((r) => ({ queue: r.name, waiting: Number(r.n) }));
}

/** Drops samples before `before` (epoch ms); returns how many rows went. */
export async function pruneSamples(q: Queryable, before: number): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM pod_samples WHERE minute < $1", [new Date(before)]);
  return rowCount ?? 0;
}
