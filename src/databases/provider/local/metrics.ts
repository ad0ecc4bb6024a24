import { isRunning } from "../../../pgserver/cluster.js";
import type { ServerSample } from "../types.js";
import { listStoredBackups } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { standbyStatus } from "./standby.js";

/**
 * One sample of a running server over the platform's admin session (per-minute metrics). Commits and block counts
 * leave out the maintenance database "postgres", where the platform's own sessions (this one included) run, and
 * sessions named "platform" are not counted as connections. Null when the server is not running.
 */
export async function sampleServer(ctx: InstanceContext): Promise<ServerSample | null> {
  if (!(await isRunning(ctx.primary))) return null;
  const row = await ctx.withPrimary((c) =>
    c
      .query<{
        connections: number;
        max_connections: number;
        commits: string | null;
        hits: string | null;
        reads: string | null;
        size: string | null;
        archived: Date | null;
      }>(
        `SELECT (SELECT count(*)::int FROM pg_stat_activity
                  WHERE backend_type = 'client backend' AND application_name <> 'platform') AS connections,
                current_setting('max_connections')::int AS max_connections,
                sum(xact_commit)::text AS commits, sum(blks_hit)::text AS hits, sum(blks_read)::text AS reads,
                (SELECT sum(pg_database_size(oid))::text FROM pg_database WHERE NOT datistemplate) AS size,
                (SELECT last_archived_time FROM pg_stat_archiver) AS archived
           FROM pg_stat_database d
          WHERE d.datname IS NOT NULL AND d.datname <> 'postgres'
            AND NOT EXISTS (SELECT 1 FROM pg_database t WHERE t.datname = d.datname AND t.datistemplate)`,
      )
      .then((r) => r.rows[0]),
  );
  const standby = ctx.record.standby ? await standbyStatus(ctx).catch(() => null) : null;
  // a snapshot is a full base backup too (taken on demand): either one restores
  const bases = await listStoredBackups(ctx.layout.baseBackups);
  return {
    connections: row.connections,
    maxConnections: row.max_connections,
    commitsTotal: Number(row.commits ?? 0),
    blocksHitTotal: Number(row.hits ?? 0),
    blocksReadTotal: Number(row.reads ?? 0),
    sizeBytes: Number(row.size ?? 0),
    replicationLagBytes: standby?.streaming ? standby.lagBytes : null,
    replicationLagSeconds: standby?.streaming ? standby.replayLagSeconds : null,
    lastBaseBackupAt: bases.at(-1)?.finishedAt ?? null,
    lastArchivedWalAt: row.archived ? row.archived.toISOString() : null,
  };
}
