import type { Queryable } from "../store/db.js";

/**
 * Pods' and pod groups' runtime rows for the API and their hourly roll-up (migrations 074, 078). Network is the
 * runtime's cumulative counters (pod_samples.net_in_bytes / net_out_bytes, podman's NET IO) turned into the bytes
 * of each minute: the increase over the pod's previous sample, or the whole counter when it went down (the container
 * restarted and counts from 0); a pod's first sample has no previous one, so that minute's figure is unknown (null).
 */

const n = (v: string | null): number | null => (v === null ? null : Number(v));

const HOUR = `date_bin('1 hour', minute, timestamptz '1970-01-01 00:00:00+00')`;

/** A pod's or a group's runtime row for the API: a minute (weight 1) or an hour (weight: minutes with CPU). */
export interface RuntimeRow {
  at: number;
  cpuPercent: number | null;
  cpuMinutes: number;
  memoryBytes: number | null;
  memoryLimitBytes: number | null;
  restarts: number;
  replicas: number;
  /** bytes received and sent during the row (null: not known, as a first sample's minute) */
  netRxBytes: number | null;
  netTxBytes: number | null;
}

/** The bytes of one minute from a cumulative counter and the previous sample's (see the file's comment). */
export function counterIncrease(now: number | null, before: number | null | undefined): number | null {
  if (now === null || before === null || before === undefined) return null;
  return now >= before ? now - before : now;
}

/** the same, in SQL, for `column` over a pod's samples ordered by minute */
const increase = (column: string) => `CASE
    WHEN lag(${column}) OVER (PARTITION BY pod_id ORDER BY minute) IS NULL OR ${column} IS NULL THEN NULL
    WHEN ${column} >= lag(${column}) OVER (PARTITION BY pod_id ORDER BY minute)
      THEN ${column} - lag(${column}) OVER (PARTITION BY pod_id ORDER BY minute)
    ELSE ${column} END`;

/** Each pod's samples from an hour before $2 to $3 with their increases (restarts, network); $1: a group or NULL. */
const POD_INCREASES = `SELECT *,
    GREATEST(restart_count - lag(restart_count) OVER (PARTITION BY pod_id ORDER BY minute), 0) AS restarts,
    ${increase("net_in_bytes")} AS net_rx, ${increase("net_out_bytes")} AS net_tx
  FROM pod_samples`;

/**
 * Members' samples of [$2, $3) added per minute; a member's restarts and network are its counters' increases over
 * its previous sample (looked up to an hour back). $1: the group, or NULL for every group (the roll-up).
 */
const GROUP_MINUTES = `WITH s AS (${POD_INCREASES}
     WHERE ($1::uuid IS NULL AND group_id IS NOT NULL OR group_id = $1::uuid)
       AND minute >= $2::timestamptz - interval '1 hour' AND minute < $3),
  per_minute AS (
    SELECT group_id, minute, (array_agg(owner_kind))[1] AS owner_kind, (array_agg(owner_id))[1] AS owner_id,
           sum(cpu_percent) AS cpu, sum(memory_bytes) AS mem, sum(restarts) AS restarts, count(*)::int AS replicas,
           sum(net_rx) AS net_rx, sum(net_tx) AS net_tx
      FROM s WHERE minute >= $2 GROUP BY group_id, minute)`;

/**
 * A pod group's per-minute rows in [from, to): its members' samples added minute by minute (CPU, memory and
 * network add across members; restarts are each member's increases), or its hour rows.
 */
export async function groupRows(
  q: Queryable,
  groupId: string,
  from: number,
  to: number,
  table: "minutes" | "hours",
): Promise<RuntimeRow[]> {
  const { rows } = await q.query<RuntimeDbRow>(
    table === "minutes"
      ? `${GROUP_MINUTES} SELECT minute AS at, cpu, (cpu IS NOT NULL)::int AS cpu_minutes, mem, restarts, replicas,
           net_rx, net_tx FROM per_minute ORDER BY minute`
      : `SELECT hour AS at, cpu_percent AS cpu, cpu_minutes, memory_bytes AS mem, restarts, replicas,
                net_rx_bytes AS net_rx, net_tx_bytes AS net_tx
           FROM group_hours WHERE group_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour`,
    [groupId, new Date(from), new Date(to)],
  );
  return rows.map(runtimeRow);
}

/** A runtime row as the minute and hour queries name its columns (a group has no memory limit of its own). */
interface RuntimeDbRow {
  at: Date;
  cpu: number | null;
  cpu_minutes: number;
  mem: string | null;
  mem_limit?: string | null;
  restarts: string | number;
  replicas: number;
  net_rx: string | null;
  net_tx: string | null;
}

const runtimeRow = (r: RuntimeDbRow): RuntimeRow => ({
  at: r.at.getTime(),
  cpuPercent: r.cpu,
  cpuMinutes: r.cpu_minutes,
  memoryBytes: n(r.mem),
  memoryLimitBytes: n(r.mem_limit ?? null),
  restarts: Number(r.restarts),
  replicas: r.replicas,
  netRxBytes: n(r.net_rx),
  netTxBytes: n(r.net_tx),
});

/** One pod's hour rows in [from, to). */
export async function podHours(q: Queryable, podId: string, from: number, to: number): Promise<RuntimeRow[]> {
  const { rows } = await q.query<RuntimeDbRow>(
    `SELECT hour AS at, cpu_percent AS cpu, cpu_minutes, memory_bytes AS mem, memory_limit_bytes AS mem_limit, restarts,
            1 AS replicas, net_rx_bytes AS net_rx, net_tx_bytes AS net_tx
       FROM pod_hours WHERE pod_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour`,
    [podId, new Date(from), new Date(to)],
  );
  return rows.map(runtimeRow);
}

/** Rolls pods' and groups' minutes of [from, to) (whole hours) into hour rows; a rerun replaces them. */
export async function rollupPodGroupHours(q: Queryable, from: number, to: number): Promise<number> {
  const args = [new Date(from), new Date(to)];
  const pods = await q.query(
    `INSERT INTO pod_hours (pod_id, hour, owner_kind, owner_id, group_id, cpu_percent, cpu_minutes, memory_bytes,
                            memory_limit_bytes, restarts, net_rx_bytes, net_tx_bytes)
     SELECT pod_id, ${HOUR}, (array_agg(owner_kind ORDER BY minute DESC))[1],
            (array_agg(owner_id ORDER BY minute DESC))[1], (array_agg(group_id ORDER BY minute DESC))[1],
            avg(cpu_percent), count(cpu_percent), max(memory_bytes), max(memory_limit_bytes), sum(restarts),
            sum(net_rx), sum(net_tx)
       FROM (${POD_INCREASES} WHERE minute >= $1::timestamptz - interval '1 hour' AND minute < $2) s
      WHERE minute >= $1
      GROUP BY pod_id, ${HOUR} ORDER BY 1, 2
     ON CONFLICT (pod_id, hour) DO UPDATE SET owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id,
       group_id = EXCLUDED.group_id, cpu_percent = EXCLUDED.cpu_percent, cpu_minutes = EXCLUDED.cpu_minutes,
       memory_bytes = EXCLUDED.memory_bytes, memory_limit_bytes = EXCLUDED.memory_limit_bytes,
       restarts = EXCLUDED.restarts, net_rx_bytes = EXCLUDED.net_rx_bytes, net_tx_bytes = EXCLUDED.net_tx_bytes`,
    args,
  );
  const groups = await q.query(
    `${GROUP_MINUTES}
     INSERT INTO group_hours (group_id, hour, owner_kind, owner_id, cpu_percent, cpu_minutes, memory_bytes, restarts,
                              replicas, net_rx_bytes, net_tx_bytes)
     SELECT group_id, ${HOUR}, (array_agg(owner_kind ORDER BY minute DESC))[1],
            (array_agg(owner_id ORDER BY minute DESC))[1], avg(cpu), count(cpu), max(mem), sum(restarts), max(replicas),
            sum(net_rx), sum(net_tx)
       FROM per_minute GROUP BY group_id, ${HOUR} ORDER BY 1, 2
     ON CONFLICT (group_id, hour) DO UPDATE SET owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id,
       cpu_percent = EXCLUDED.cpu_percent, cpu_minutes = EXCLUDED.cpu_minutes, memory_bytes = EXCLUDED.memory_bytes,
       restarts = EXCLUDED.restarts, replicas = EXCLUDED.replicas, net_rx_bytes = EXCLUDED.net_rx_bytes,
       net_tx_bytes = EXCLUDED.net_tx_bytes`,
    [null, ...args],
  );
  return (pods.rowCount ?? 0) + (groups.rowCount ?? 0);
}
