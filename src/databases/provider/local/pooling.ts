import { rm } from "node:fs/promises";
import type { PoolStatus } from "../types.js";
import type { InstanceContext } from "./context.js";
import { renderPoolHba } from "./hba.js";
import {
  findPgbouncer,
  poolHasRole,
  poolPid,
  reloadPool,
  renderUserlist,
  requirePgbouncer,
  startPool,
  stopPool,
  writePoolFiles,
  type PoolConfig,
} from "./pool.js";
import { generatePassword, saveSecrets } from "./record.js";
import { SIZE_PROFILES } from "./settings.js";

/** An instance's PgBouncer as the provider runs it: config from the record, lifecycle, reloads (pool.ts has the daemon itself). */

/** Gives the instance a pooler (a port of its own, kept in the record) and starts it. */
export async function enablePool(ctx: InstanceContext, allocatePort: () => Promise<number>): Promise<PoolStatus> {
  await ctx.requireRunning();
  if (!ctx.record.pool) {
    ctx.record.pool = { port: await allocatePort() };
    await ctx.save();
  }
  await startPoolFor(ctx);
  return poolStatusOf(ctx);
}

export async function disablePool(ctx: InstanceContext): Promise<void> {
  await stopPool(ctx.layout.poolDir);
  await rm(ctx.layout.poolDir, { recursive: true, force: true });
  ctx.record.pool = null;
  await ctx.save();
}

export async function poolStatusOf(ctx: InstanceContext): Promise<PoolStatus> {
  const pool = ctx.record.pool;
  return {
    enabled: pool !== null,
    running: pool !== null && (await poolPid(ctx.layout.poolDir)) !== null,
    mode: "transaction",
    endpoint: pool ? ctx.endpoint(pool.port) : null,
    available: findPgbouncer(ctx.env.pgbouncerPath) !== null,
  };
}

function poolConfig(ctx: InstanceContext): PoolConfig {
  const profile = SIZE_PROFILES[ctx.record.size];
  return {
    dir: ctx.layout.poolDir,
    listenPort: ctx.record.pool!.port,
    serverSocketDir: ctx.layout.socketDir,
    serverPort: ctx.record.port,
    certFile: ctx.layout.certFile,
    keyFile: ctx.layout.keyFile,
    poolSize: profile.poolSize,
    maxClients: profile.maxConnections * 10,
  };
}

async function writePool(ctx: InstanceContext): Promise<void> {
  if (!ctx.secrets.poolAdminPassword) {
    ctx.secrets.poolAdminPassword = generatePassword();
    await saveSecrets(ctx.layout, ctx.secrets);
  }
  const userlist = await ctx.withPrimary((c) => renderUserlist(c, ctx.secrets.poolAdminPassword!));
  await writePoolFiles(
    poolConfig(ctx),
    userlist,
    renderPoolHba(ctx.record.allowlist, ctx.env.alwaysAllowed),
    ctx.runAs,
  );
}

export async function startPoolFor(ctx: InstanceContext): Promise<void> {
  const bin = requirePgbouncer(ctx.env.pgbouncerPath);
  await writePool(ctx);
  await startPool(bin, poolConfig(ctx), ctx.runAs);
}

/** New passwords, allowlist or size reach a running pooler (RELOAD on its console; clients stay connected). */
export async function refreshPool(ctx: InstanceContext): Promise<void> {
  if (!findPgbouncer(ctx.env.pgbouncerPath)) return;
  await writePool(ctx);
  await reloadPool(ctx.layout.poolDir, ctx.record.pool!.port, ctx.secrets.poolAdminPassword!);
}

/**
 * After the role's password changed on the server: the pooler gets the new verifier (old password
 * refused from here on), and if the role has sessions in it, it is restarted. Leaving them is not
 * safe even though their server connections were terminated: PgBouncer logs in to the server with the
 * SCRAM keys of the role's most recent client login, so once anyone logs in with the new password,
 * clients still connected with the old one are served again.
 *
 * A restart, not the console's `KILL db`: PgBouncer 1.18 cannot end one role's clients (KILL_CLIENT is
 * 1.24+), and `KILL db` ends neither logins under way (one begun with the old password completes
 * afterwards) nor safely so — it frees the pools those logins point to, and PgBouncer crashes when one
 * completes (reproduced with 1.18; pgbouncer/pgbouncer#1401 reports KILL crashes in 1.24). The restart
 * cuts every pooled session of the instance and refuses new connections for the moment it takes.
 */
export async function endPooledSessions(ctx: InstanceContext, role: string): Promise<void> {
  await writePool(ctx); // a stopped pooler starts with the new verifier; it has no sessions to end
  const { poolDir } = ctx.layout;
  const port = ctx.record.pool!.port;
  if (!(await poolPid(poolDir))) return;
  await reloadPool(poolDir, port, ctx.secrets.poolAdminPassword!);
  if (!(await poolHasRole(poolDir, port, ctx.secrets.poolAdminPassword!, role))) return;
  await stopPool(poolDir);
  await startPool(requirePgbouncer(ctx.env.pgbouncerPath), poolConfig(ctx), ctx.runAs);
}
