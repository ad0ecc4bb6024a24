import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { DatabaseServerSample } from "./contract.js";

/**
 * Pod groups', databases' and the hourly series (migration 074): database samples, the roll-up of minutes into
 * hours and its watermark, and retention. Rows read for the API come out in one shape per kind, whether minute or
 * hour rows (`at` is the row's start; an hour row's averages carry their weight in minutes).
 */

const n = (v: string | null): number | null => (v === null ? null : Number(v));

const HOUR = `date_bin('1 hour', minute, timestamptz '1970-01-01 00:00:00+00')`;

/**
 * One database's figures at one minute, as the sampler stores them: the server's sample (without its backup times,
 * stored as ages) with the deltas from the previous sample.
 */
export interface DatabaseSampleRow
  extends Omit<DatabaseServerSample, "lastBaseBackupAt" | "lastArchivedWalAt">, Omit<DatabaseSeriesRow, "at"> {
  minute: number;
  /** epoch ms of the sample itself */
  sampledAt: number;
}

/** A database's row for the API: a minute or an hour (sums and highest values of its minutes). */
export interface DatabaseSeriesRow {
  at: number;
  connections: number;
  maxConnections: number;
  commits: number | null;
  blocksHit: number | null;
  blocksRead: number | null;
  coveredSeconds: number | null;
  sizeBytes: number;
  replicationLagBytes: number | null;
  replicationLagSeconds: number | null;
  baseBackupAgeSeconds: number | null;
  archivedWalAgeSeconds: number | null;
}

/** A pod's or a group's runtime row for the API: a minute (weight 1) or an hour (weight: minutes with CPU). */
export interface RuntimeRow {
  at: number;
  cpuPercent: number | null;
  cpuMinutes: number;
  memoryBytes: number | null;
  memoryLimitBytes: number | null;
  restarts: number;
  replicas: number;
}

/** The newest sample of each of these databases within the last `withinMs` (the next deltas start from them). */
export async function previousDatabaseSamples(
  q: Queryable,
  ids: string[],
  withinMs: number,
  now = Date.now(),
): Promise<Map<string, DatabaseSampleRow>> {
  if (!ids.length) return new Map();
  const { rows } = await q.query<{
    id: string;
    minute: Date;
    sampled_at: Date;
    c: string;
    h: string;
    r: string;
    commits: string | null;
    blocks_hit: string | null;
    blocks_read: string | null;
    covered_seconds: number | null;
  }>(
    `SELECT DISTINCT ON (database_id) database_id::text AS id, minute, sampled_at, commits_total AS c,
            blocks_hit_total AS h, blocks_read_total AS r, commits, blocks_hit, blocks_read, covered_seconds
       FROM database_samples WHERE database_id = ANY($1::uuid[]) AND minute >= $2
      ORDER BY database_id, minute DESC`,
    [ids, new Date(now - withinMs)],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        databaseId: r.id,
        minute: r.minute.getTime(),
        sampledAt: r.sampled_at.getTime(),
        owner: { kind: "account", id: "" },
        connections: 0,
        maxConnections: 0,
        commitsTotal: Number(r.c),
        blocksHitTotal: Number(r.h),
        blocksReadTotal: Number(r.r),
        commits: n(r.commits),
        blocksHit: n(r.blocks_hit),
        blocksRead: n(r.blocks_read),
        coveredSeconds: r.covered_seconds,
        sizeBytes: 0,
        replicationLagBytes: null,
        replicationLagSeconds: null,
        baseBackupAgeSeconds: null,
        archivedWalAgeSeconds: null,
      },
    ]),
  );
}

/** Stores one pass; a second pass in the same minute replaces the first. */
export async function addDatabaseSamples(q: Queryable, rows: DatabaseSampleRow[]): Promise<void> {
  if (!rows.length) return;
  const sorted = [...rows].sort((a, b) => (a.databaseId < b.databaseId ? -1 : 1));
  const col = <T>(f: (r: DatabaseSampleRow) => T) => sorted.map(f);
  await q.query(
    `INSERT INTO database_samples (database_id, minute, sampled_at, owner_kind, owner_id, connections, max_connections,
       commits_total, blocks_hit_total, blocks_read_total, commits, blocks_hit, blocks_read, covered_seconds,
       size_bytes, replication_lag_bytes, replication_lag_seconds, base_backup_age_seconds, archived_wal_age_seconds)
     SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $19::timestamptz[], $3::text[], $4::uuid[], $5::int[],
       $6::int[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::float8[],
       $14::bigint[], $15::bigint[], $16::float8[], $17::float8[], $18::float8[])
     ON CONFLICT (database_id, minute) DO UPDATE SET
       sampled_at = EXCLUDED.sampled_at, owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id, connections = EXCLUDED.connections,
       max_connections = EXCLUDED.max_connections, commits_total = EXCLUDED.commits_total,
       blocks_hit_total = EXCLUDED.blocks_hit_total, blocks_read_total = EXCLUDED.blocks_read_total,
       commits = EXCLUDED.commits, blocks_hit = EXCLUDED.blocks_hit, blocks_read = EXCLUDED.blocks_read,
       covered_seconds = EXCLUDED.covered_seconds, size_bytes = EXCLUDED.size_bytes,
       replication_lag_bytes = EXCLUDED.replication_lag_bytes,
       replication_lag_seconds = EXCLUDED.replication_lag_seconds,
       base_backup_age_seconds = EXCLUDED.base_backup_age_seconds,
       archived_wal_age_seconds = EXCLUDED.archived_wal_age_seconds`,
    [
      col((r) => r.databaseId),
      col((r) => new Date(r.minute)),
      col((r) => r.owner.kind),
      col((r) => r.owner.id),
      col((r) => r.connections),
      col((r) => r.maxConnections),
      col((r) => r.commitsTotal),
      col((r) => r.blocksHitTotal),
      col((r) => r.blocksReadTotal),
      col((r) => r.commits),
      col((r) => r.blocksHit),
      col((r) => r.blocksRead),
      col((r) => r.coveredSeconds),
      col((r) => r.sizeBytes),
      col((r) => r.replicationLagBytes),
      col((r) => r.replicationLagSeconds),
      col((r) => r.baseBackupAgeSeconds),
      col((r) => r.archivedWalAgeSeconds),
      col((r) => new Date(r.sampledAt)),
    ],
  );
}

const DB_FIGURES = `connections, max_connections, commits, blocks_hit, blocks_read, covered_seconds, size_bytes,
  replication_lag_bytes, replication_lag_seconds, base_backup_age_seconds, archived_wal_age_seconds`;

interface DbFigures {
  at: Date;
  connections: number;
  max_connections: number;
  commits: string | null;
  blocks_hit: string | null;
  blocks_read: string | null;
  covered_seconds: number | null;
  size_bytes: string;
  replication_lag_bytes: string | null;
  replication_lag_seconds: number | null;
  base_backup_age_seconds: number | null;
  archived_wal_age_seconds: number | null;
}

const dbRow = (r: DbFigures): DatabaseSeriesRow => ({
  at: r.at.getTime(),
  connections: r.connections,
  maxConnections: r.max_connections,
  commits: n(r.commits),
  blocksHit: n(r.blocks_hit),
  blocksRead: n(r.blocks_read),
  coveredSeconds: r.covered_seconds,
  sizeBytes: Number(r.size_bytes),
  replicationLagBytes: n(r.replication_lag_bytes),
  replicationLagSeconds: r.replication_lag_seconds,
  baseBackupAgeSeconds: r.base_backup_age_seconds,
  archivedWalAgeSeconds: r.archived_wal_age_seconds,
});

/** One database's rows in [from, to) (epoch ms) of minute or hour resolution, oldest first. */
export async function databaseRows(
  q: Queryable,
  id: string,
  from: number,
  to: number,
  table: "minutes" | "hours",
): Promise<DatabaseSeriesRow[]> {
  const [name, at] = table === "minutes" ? ["database_samples", "minute"] : ["database_hours", "hour"];
  const { rows } = await q.query<DbFigures>(
    `SELECT ${at} AS at, ${DB_FIGURES} FROM ${name} WHERE database_id = $1 AND ${at} >= $2 AND ${at} < $3
      ORDER BY ${at}`,
    [id, new Date(from), new Date(to)],
  );
  return rows.map(dbRow);
}

/** Each database's newest sample within the last `withinMs` (the operator endpoint's gauges). */
export async function latestDatabaseSamples(
  q: Queryable,
  withinMs: number,
): Promise<(DatabaseSeriesRow & { databaseId: string; owner: Owner })[]> {
  const { rows } = await q.query<DbFigures & { id: string; owner_kind: Owner["kind"]; owner_id: string }>(
    `SELECT DISTINCT ON (database_id) database_id::text AS id, owner_kind, owner_id::text, minute AS at, ${DB_FIGURES}
       FROM database_samples WHERE minute >= $1 ORDER BY database_id, minute DESC`,
    [new Date(Date.now() - withinMs)],
  );
  return rows.map((r) => ({ ...dbRow(r), databaseId: r.id, owner: { kind: r.owner_kind, id: r.owner_id } }));
}

/**
 * A pod group's per-minute rows in [from, to): its members' samples added minute by minute (CPU and memory add
 * across members; restarts are each member's increases), or its hour rows.
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
      ? `${GROUP_MINUTES} SELECT minute AS at, cpu, (cpu IS NOT NULL)::int AS cpu_minutes, mem, restarts, replicas
           FROM per_minute ORDER BY minute`
      : `SELECT hour AS at, cpu_percent AS cpu, cpu_minutes, memory_bytes AS mem, restarts, replicas FROM group_hours
          WHERE group_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour`,
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
}

const runtimeRow = (r: RuntimeDbRow): RuntimeRow => ({
  at: r.at.getTime(),
  cpuPercent: r.cpu,
  cpuMinutes: r.cpu_minutes,
  memoryBytes: n(r.mem),
  memoryLimitBytes: n(r.mem_limit ?? null),
  restarts: Number(r.restarts),
  replicas: r.replicas,
});

/**
 * Members' samples of [$2, $3) added per minute; a member's restarts are its count's increase over its previous
 * sample (looked up to an hour back). $1: the group, or NULL for every group (the roll-up).
 */
const GROUP_MINUTES = `WITH s AS (
    SELECT group_id, minute, owner_kind, owner_id, cpu_percent, memory_bytes,
           GREATEST(restart_count - lag(restart_count) OVER (PARTITION BY pod_id ORDER BY minute), 0) AS restarts
      FROM pod_samples
     WHERE ($1::uuid IS NULL AND group_id IS NOT NULL OR group_id = $1::uuid)
       AND minute >= $2::timestamptz - interval '1 hour' AND minute < $3),
  per_minute AS (
    SELECT group_id, minute, (array_agg(owner_kind))[1] AS owner_kind, (array_agg(owner_id))[1] AS owner_id,
           sum(cpu_percent) AS cpu, sum(memory_bytes) AS mem, sum(restarts) AS restarts, count(*)::int AS replicas
      FROM s WHERE minute >= $2 GROUP BY group_id, minute)`;

/** One pod's hour rows in [from, to). */
export async function podHours(q: Queryable, podId: string, from: number, to: number): Promise<RuntimeRow[]> {
  const { rows } = await q.query<RuntimeDbRow>(
    `SELECT hour AS at, cpu_percent AS cpu, cpu_minutes, memory_bytes AS mem, memory_limit_bytes AS mem_limit, restarts,
            1 AS replicas
       FROM pod_hours WHERE pod_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour`,
    [podId, new Date(from), new Date(to)],
  );
  return rows.map(runtimeRow);
}

/** Hours before this (epoch ms) are rolled up; null: never ran. Locks the row when `lock` (one roll-up at a time). */
export async function rolledThrough(q: Queryable, lock = false): Promise<number | null> {
  const { rows } = await q.query<{ at: Date }>(
    `SELECT rolled_through AS at FROM metrics_rollup${lock ? " FOR UPDATE" : ""}`,
  );
  return rows[0]?.at.getTime() ?? null;
}

export async function setRolledThrough(q: Queryable, at: number): Promise<void> {
  await q.query(
    `INSERT INTO metrics_rollup (singleton, rolled_through) VALUES (true, $1)
     ON CONFLICT (singleton) DO UPDATE SET rolled_through = GREATEST(metrics_rollup.rolled_through, EXCLUDED.rolled_through)`,
    [new Date(at)],
  );
}

/** Serialises roll-ups across processes for the transaction (the watermark row may not exist yet). */
export async function lockRollup(q: Queryable): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('metrics.rollup'))");
}

/** Rolls pods', groups' and databases' minutes of [from, to) (whole hours) into hour rows; a rerun replaces them. */
export async function rollupRuntimeHours(q: Queryable, from: number, to: number): Promise<number> {
  const args = [new Date(from), new Date(to)];
  const pods = await q.query(
    `INSERT INTO pod_hours (pod_id, hour, owner_kind, owner_id, group_id, cpu_percent, cpu_minutes, memory_bytes,
                            memory_limit_bytes, restarts)
     SELECT pod_id, ${HOUR}, (array_agg(owner_kind ORDER BY minute DESC))[1],
            (array_agg(owner_id ORDER BY minute DESC))[1], (array_agg(group_id ORDER BY minute DESC))[1],
            avg(cpu_percent), count(cpu_percent), max(memory_bytes), max(memory_limit_bytes), sum(restarts)
       FROM (SELECT *, GREATEST(restart_count - lag(restart_count) OVER (PARTITION BY pod_id ORDER BY minute), 0)
                       AS restarts
               FROM pod_samples WHERE minute >= $1::timestamptz - interval '1 hour' AND minute < $2) s
      WHERE minute >= $1
      GROUP BY pod_id, ${HOUR} ORDER BY 1, 2
     ON CONFLICT (pod_id, hour) DO UPDATE SET owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id,
       group_id = EXCLUDED.group_id, cpu_percent = EXCLUDED.cpu_percent, cpu_minutes = EXCLUDED.cpu_minutes,
       memory_bytes = EXCLUDED.memory_bytes, memory_limit_bytes = EXCLUDED.memory_limit_bytes,
       restarts = EXCLUDED.restarts`,
    args,
  );
  const groups = await q.query(
    `${GROUP_MINUTES}
     INSERT INTO group_hours (group_id, hour, owner_kind, owner_id, cpu_percent, cpu_minutes, memory_bytes, restarts,
                              replicas)
     SELECT group_id, ${HOUR}, (array_agg(owner_kind ORDER BY minute DESC))[1],
            (array_agg(owner_id ORDER BY minute DESC))[1], avg(cpu), count(cpu), max(mem), sum(restarts), max(replicas)
       FROM per_minute GROUP BY group_id, ${HOUR} ORDER BY 1, 2
     ON CONFLICT (group_id, hour) DO UPDATE SET owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id,
       cpu_percent = EXCLUDED.cpu_percent, cpu_minutes = EXCLUDED.cpu_minutes, memory_bytes = EXCLUDED.memory_bytes,
       restarts = EXCLUDED.restarts, replicas = EXCLUDED.replicas`,
    [null, ...args],
  );
  const databases = await q.query(
    `INSERT INTO database_hours (database_id, hour, owner_kind, owner_id, connections, max_connections, commits,
       blocks_hit, blocks_read, covered_seconds, size_bytes, replication_lag_bytes, replication_lag_seconds,
       base_backup_age_seconds, archived_wal_age_seconds)
     SELECT database_id, ${HOUR}, (array_agg(owner_kind ORDER BY minute DESC))[1],
            (array_agg(owner_id ORDER BY minute DESC))[1], max(connections), max(max_connections), sum(commits),
            sum(blocks_hit), sum(blocks_read), sum(covered_seconds), max(size_bytes), max(replication_lag_bytes),
            max(replication_lag_seconds), max(base_backup_age_seconds), max(archived_wal_age_seconds)
       FROM database_samples WHERE minute >= $1 AND minute < $2
      GROUP BY database_id, ${HOUR} ORDER BY 1, 2
     ON CONFLICT (database_id, hour) DO UPDATE SET owner_kind = EXCLUDED.owner_kind, owner_id = EXCLUDED.owner_id,
       connections = EXCLUDED.connections, max_connections = EXCLUDED.max_connections, commits = EXCLUDED.commits,
       blocks_hit = EXCLUDED.blocks_hit, blocks_read = EXCLUDED.blocks_read,
       covered_seconds = EXCLUDED.covered_seconds, size_bytes = EXCLUDED.size_bytes,
       replication_lag_bytes = EXCLUDED.replication_lag_bytes,
       replication_lag_seconds = EXCLUDED.replication_lag_seconds,
       base_backup_age_seconds = EXCLUDED.base_backup_age_seconds,
       archived_wal_age_seconds = EXCLUDED.archived_wal_age_seconds`,
    args,
  );
  return (pods.rowCount ?? 0) + (groups.rowCount ?? 0) + (databases.rowCount ?? 0);
}

/** Retention: minute rows before `minutesBefore`, hour rows before `hoursBefore` (epoch ms); answers the counts. */
export async function pruneSeries(
  q: Queryable,
  minutesBefore: number,
  hoursBefore: number,
): Promise<{ minutes: number; hours: number }> {
  const m = new Date(minutesBefore);
  const h = new Date(hoursBefore);
  const counts = await Promise.all([
    q.query("DELETE FROM database_samples WHERE minute < $1", [m]),
    q.query("DELETE FROM pod_hours WHERE hour < $1", [h]),
    q.query("DELETE FROM group_hours WHERE hour < $1", [h]),
    q.query("DELETE FROM database_hours WHERE hour < $1", [h]),
  ]);
  return {
    minutes: counts[0].rowCount ?? 0,
    hours: counts.slice(1).reduce((s, r) => s + (r.rowCount ?? 0), 0),
  };
}
