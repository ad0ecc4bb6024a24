import { isRunning, startCluster, stopCluster } from "../../../pgserver/cluster.js";
import { ProviderError, type DbSize, type StorageState } from "../types.js";
import { directorySize } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { GiB } from "./host.js";
import type { NodeName } from "./layout.js";
import { refreshPool } from "./pooling.js";
import { SIZE_PROFILES } from "./settings.js";
import { waitStreaming } from "./standby.js";

/** Changes the record makes to running servers by rewriting their config: size (restart), storage quota and allowlist (reload). */

export async function applySize(ctx: InstanceContext, size: DbSize): Promise<void> {
  if (SIZE_PROFILES[size].shared && ctx.record.standby) {
    throw new ProviderError("ha_enabled", `size ${size} has no standby: disable HA before resizing`);
  }
  const before = SIZE_PROFILES[ctx.record.size];
  const running = await isRunning(ctx.primary);
  if (SIZE_PROFILES[size].shared && running) {
    // shared sizes do not preload it; the extension would be left broken
    await ctx.withPrimary((c) => c.query("DROP EXTENSION IF EXISTS pg_stat_statements"), ctx.record.database);
  }
  ctx.record.size = size;
  await ctx.save();
  // a hot standby refuses to run with fewer connections than its primary: grow it first, shrink it last
  const growing = SIZE_PROFILES[size].maxConnections >= before.maxConnections;
  const sb = ctx.standbyNode();
  const order: NodeName[] = sb ? (growing ? [sb, ctx.primaryNode] : [ctx.primaryNode, sb]) : [ctx.primaryNode];
  for (const node of order) {
    await ctx.writeNodeConfig(node);
    const cluster = ctx.cluster(node);
    if (await isRunning(cluster)) {
      await stopCluster(cluster, "fast");
      await startCluster(cluster, 300);
    }
  }
  if (sb && (await isRunning(ctx.cluster(sb)))) await waitStreaming(ctx, 30_000);
  if (ctx.record.pool) await refreshPool(ctx);
}

/**
 * Over quota → default_transaction_read_only for every session (a reload reaches open sessions at
 * their next transaction). This is a guard against runaway growth, not a security boundary: a
 * session can still SET it off, which is also how a customer deletes data to get back under quota.
 */
export async function enforceStorage(ctx: InstanceContext): Promise<StorageState> {
  const usage = await directorySize(ctx.primary.dataDir);
  const quota = Math.round(ctx.record.storageGb * GiB);
  const reason =
    usage > quota
      ? `storage quota exceeded: ${formatBytes(usage)} used of ${ctx.record.storageGb} GB; the database is read-only until storage_gb is raised or data is deleted`
      : null;
  if ((reason === null) !== (ctx.record.readOnlyReason === null)) {
    ctx.record.readOnlyReason = reason;
    await ctx.save();
    await reconfigureNodes(ctx);
  } else if (reason) {
    ctx.record.readOnlyReason = reason; // keep the figure current
    await ctx.save();
  }
  return { usageBytes: usage, quotaBytes: quota, readOnly: reason ? { reason } : null };
}

export async function setAllowlist(ctx: InstanceContext, cidrs: string[]): Promise<void> {
  ctx.record.allowlist = cidrs;
  await ctx.save();
  await reconfigureNodes(ctx);
  if (ctx.record.pool) await refreshPool(ctx);
}

/** Settings that a reload applies, on every node that exists. */
async function reconfigureNodes(ctx: InstanceContext): Promise<void> {
  for (const node of [ctx.primaryNode, ctx.standbyNode()].filter((n): n is NodeName => n !== null)) {
    await ctx.writeNodeConfig(node);
    await ctx.reload(node);
  }
}

function formatBytes(n: number): string {
  return n >= GiB ? `${(n / GiB).toFixed(2)} GB` : `${(n / 2 ** 20).toFixed(1)} MB`;
}
