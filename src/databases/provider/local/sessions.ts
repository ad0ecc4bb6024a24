import type { InstanceContext } from "./context.js";
import { poolSessions } from "./pool.js";
import { ADMIN_ROLE, POOL_ADMIN_ROLE, REPLICATION_ROLE } from "./record.js";

/**
 * Client sessions of an instance now (the idle sweep's measure, issue 30): the server's client backends of
 * customer roles, without the pooler's server links (its SHOW SERVERS pids), plus the pooler's clients. The
 * platform's roles (admin, replication, pool console) are not clients. A session piped by a wake front is a
 * server backend over the Unix socket, so it counts like any direct one.
 */
export async function clientSessions(ctx: InstanceContext): Promise<number> {
  const pool =
    ctx.record.pool && ctx.secrets.poolAdminPassword
      ? await poolSessions(ctx.layout.poolDir, ctx.record.pool.port, ctx.secrets.poolAdminPassword)
      : { clients: 0, serverPids: [] };
  const direct = await ctx.withPrimary(async (c) =>
    Number(
      (
        await c.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
              AND usename IS NOT NULL AND usename <> ALL($1::text[]) AND pid <> ALL($2::int[])`,
          [[ADMIN_ROLE, REPLICATION_ROLE, POOL_ADMIN_ROLE], pool.serverPids],
        )
      ).rows[0].n,
    ),
  );
  return direct + pool.clients;
}
