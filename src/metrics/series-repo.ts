import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { DatabaseServerSample } from "./contract.js";
import { rollupPodGroupHours } from "./runtime-repo.js";

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
  return (await rollupPodGroupHours(q, from, to)) + (databases.rowCount ?? 0);
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
