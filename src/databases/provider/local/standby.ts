import { rm } from "node:fs/promises";
import path from "node:path";
import { isRunning, startCluster, stopCluster } from "../../../pgserver/cluster.js";
import { ProviderError, type StandbyStatus } from "../types.js";
import { withAdmin } from "./admin.js";
import { copyRunningCluster } from "./cluster-copy.js";
import type { InstanceContext } from "./context.js";
import { waitFor, writeOwnedFile } from "./exec.js";
import { SIZE_PROFILES } from "./settings.js";
import { parseLsn } from "./wal.js";

/**
 * Streaming standby: a second server on the same host, built from an online copy of the primary
 * (low-level backup API) plus standby.signal and primary_conninfo. It also has the WAL archive as
 * restore_command, so it catches up from the archive after long outages without a replication slot
 * (a slot would pin WAL on the primary and could fill its disk while the standby is down).
 *
 * Switchover keeps URLs working by moving the *port*, not the clients: the front port (the one in
 * every URL) always belongs to whichever data directory is primary. The old primary is stopped
 * cleanly (its shutdown checkpoint streams to the standby), the standby restarts on the front port
 * and is promoted, and the old primary's directory is rebuilt as the new standby on the standby port.
 * Nothing has to stay alive for this to keep working afterwards — unlike a TCP proxy, which would
 * tie every connection to the platform process. Clients see one short reconnect (~1-2 s), as with
 * any failover. A PgBouncer pool follows automatically, since it targets the front port too.
 */

const APP_NAME = "standby";

export function disabledStatus(): StandbyStatus {
  return {
    enabled: false,
    running: false,
    port: 0,
    streaming: false,
    state: null,
    lagBytes: null,
    replayLagSeconds: null,
    replayLsn: null,
  };
}

/** Gives the instance a standby (node and port kept in the record) unless one is already streaming. */
export async function enableStandby(ctx: InstanceContext, allocatePort: () => Promise<number>): Promise<StandbyStatus> {
  if (SIZE_PROFILES[ctx.record.size].shared)
    throw new ProviderError("ha_not_supported", "a standby needs size basic or above");
  await ctx.requireRunning();
  if (ctx.record.standby) {
    const st = await standbyStatus(ctx);
    if (st.streaming) return st;
  } else {
    ctx.record.standby = { node: ctx.spareNode(), port: await allocatePort() };
    await ctx.save();
  }
  await buildStandby(ctx);
  return standbyStatus(ctx);
}

export async function rebuildStandby(ctx: InstanceContext): Promise<StandbyStatus> {
  if (!ctx.record.standby) throw new ProviderError("ha_not_enabled", "no standby to rebuild; enable HA first");
  await ctx.requireRunning();
  await buildStandby(ctx);
  return standbyStatus(ctx);
}

/** (Re)creates the standby's data directory from the running primary and starts it streaming. */
export async function buildStandby(ctx: InstanceContext): Promise<void> {
  const node = ctx.standbyNode();
  if (!node) throw new ProviderError("ha_not_enabled", "no standby is configured");
  const cluster = ctx.cluster(node);
  await stopCluster(cluster, "immediate").catch(() => {});
  await rm(cluster.dataDir, { recursive: true, force: true });
  await ctx.withPrimary((admin) =>
    copyRunningCluster(admin, ctx.primary.dataDir, cluster.dataDir, {
      owner: ctx.runAs,
      label: `standby:${ctx.record.id}`,
    }),
  );
  await ctx.writeNodeConfig(node);
  await writeOwnedFile(path.join(cluster.dataDir, "standby.signal"), "", ctx.runAs);
  await startCluster(cluster, 300);
  await waitStreaming(ctx, 60_000);
}

export async function waitStreaming(ctx: InstanceContext, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const state = await ctx
        .withPrimary((c) =>
          c.query<{ state: string }>("SELECT state FROM pg_stat_replication WHERE application_name = $1", [APP_NAME]),
        )
        .then(
          (r) => r.rows[0]?.state,
          () => undefined,
        );
      return state === "streaming" ? true : undefined;
    },
    timeoutMs,
    () => new ProviderError("standby_not_ready", "the standby started but is not streaming from the primary"),
    200,
  );
}

export async function standbyStatus(ctx: InstanceContext): Promise<StandbyStatus> {
  const sb = ctx.record.standby;
  if (!sb) return disabledStatus();
  const running = await isRunning(ctx.cluster(sb.node));
  const status: StandbyStatus = {
    enabled: true,
    running,
    port: sb.port,
    streaming: false,
    state: null,
    lagBytes: null,
    replayLagSeconds: null,
    replayLsn: null,
  };
  if (await isRunning(ctx.primary)) {
    const row = await ctx
      .withPrimary((c) =>
        c.query<{ state: string; replay_lsn: string | null; lag_bytes: string | null; replay_lag: number | null }>(
          `SELECT state, replay_lsn::text AS replay_lsn,
              pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint::text AS lag_bytes,
              extract(epoch FROM replay_lag)::float8 AS replay_lag
         FROM pg_stat_replication WHERE application_name = $1`,
          [APP_NAME],
        ),
      )
      .then((r) => r.rows[0]);
    if (row) {
      status.state = row.state;
      status.streaming = row.state === "streaming";
      status.replayLsn = row.replay_lsn;
      status.lagBytes = row.lag_bytes === null ? null : Number(row.lag_bytes);
      // replay_lag is NULL when nothing was written lately: an idle standby is not behind
      status.replayLagSeconds = row.replay_lag ?? (status.lagBytes === 0 ? 0 : null);
    }
  }
  if (running && status.replayLsn === null) {
    status.replayLsn = await withAdmin(ctx.adminTarget(sb.node), (c) =>
      c.query<{ lsn: string | null }>("SELECT pg_last_wal_replay_lsn()::text AS lsn").then((r) => r.rows[0].lsn),
    ).catch(() => null);
  }
  return status;
}

export async function disableStandby(ctx: InstanceContext): Promise<void> {
  const node = ctx.standbyNode();
  if (!node) return;
  await stopCluster(ctx.cluster(node), "fast").catch(() => stopCluster(ctx.cluster(node), "immediate"));
  await rm(ctx.cluster(node).dataDir, { recursive: true, force: true });
  ctx.record.standby = null;
  await ctx.save();
}

/** Runs (or resumes, after a crash) a switchover; each phase is recorded before its effects begin. */
export async function switchover(ctx: InstanceContext): Promise<void> {
  const rec = ctx.record;
  if (!rec.standby) throw new ProviderError("ha_not_enabled", "switchover needs a standby; enable HA first");
  if (!rec.switchover) {
    // a standby restarted moments ago reconnects within wal_retrieve_retry_interval (5 s)
    await waitStreaming(ctx, 20_000).catch(() => {
      throw new ProviderError("standby_not_ready", "the standby is not streaming; rebuild it before a switchover");
    });
    rec.switchover = { phase: "stopping_old_primary", from: rec.primaryNode, to: rec.standby.node };
    await ctx.save();
  }
  const { from, to } = rec.switchover!;
  const standbyPort = rec.standby.port;

  if (rec.switchover!.phase === "stopping_old_primary") {
    const oldPrimary = ctx.cluster(from);
    if (await isRunning(oldPrimary)) {
      const lsn = await ctx.withPrimary(async (c) => {
        await c.query("CHECKPOINT"); // makes the shutdown checkpoint quick
        return (await c.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0].lsn;
      });
      await stopCluster(oldPrimary, "fast");
      // the shutdown checkpoint comes after `lsn`: replaying past it proves the standby has everything
      const caughtUp = await waitFor(
        async () => {
          const replay = await withAdmin(ctx.adminTarget(to), (c) =>
            c.query<{ lsn: string | null }>("SELECT pg_last_wal_replay_lsn()::text AS lsn").then((r) => r.rows[0].lsn),
          ).catch(() => null);
          return replay && parseLsn(replay) > parseLsn(lsn) ? true : undefined;
        },
        30_000,
        () => new Error("timeout"),
      ).catch(() => false);
      if (!caughtUp) {
        await startCluster(oldPrimary);
        rec.switchover = null;
        await ctx.save();
        throw new ProviderError(
          "switchover_failed",
          "the standby did not receive the primary's last WAL in time; nothing was changed",
        );
      }
    }
    rec.primaryNode = to;
    rec.standby = { node: from, port: standbyPort };
    rec.switchover = { phase: "promoting", from, to };
    await ctx.save();
  }

  if (rec.switchover!.phase === "promoting") {
    const newPrimary = ctx.cluster(to);
    await stopCluster(newPrimary, "fast");
    // still in standby mode (standby.signal) but on the front port and without a primary to follow
    await ctx.writeNodeConfig(to, { kind: "primary" });
    await startCluster(newPrimary, 300);
    await ctx.withPrimary(async (c) => {
      const inRecovery = (await c.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r")).rows[0].r;
      if (inRecovery) await c.query("SELECT pg_promote(true, 120)");
    });
    rec.switchover = { phase: "rebuilding", from, to };
    await ctx.save();
  }

  if (rec.switchover!.phase === "rebuilding") {
    await buildStandby(ctx);
    rec.switchover = null;
    await ctx.save();
  }
}
