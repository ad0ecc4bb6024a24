import type { Db } from "../store/db.js";
import type { SecretBox } from "../kernel/secrets.js";
import type { Owner } from "../kernel/owner.js";
import { isProviderError, ProviderError, type BackupInfo, type DatabaseProvider } from "./provider/types.js";
import { instanceSpec, SEALED, type DatabasesDeps } from "./service.js";
import * as repo from "./repo.js";
import { appNetworks, effectiveAllowlist, type AppsSide } from "./attachments.js";
import { idleExecutors } from "./idle/executors.js";

/*
 * The server side of each database command, run by the command job (jobs.ts) under the instance's lock.
 * Kept apart from the job machinery: this file says what each command does, jobs.ts when and how it runs.
 */

type ExecutorOutput = {
  patch?: Partial<repo.DatabaseRow>;
  result?: Record<string, unknown>;
  /** System commands queued once this one is recorded as succeeded (e.g. a base backup after provisioning). */
  followUps?: string[];
};
const ownerOf = (row: repo.DatabaseRow): Owner => ({ kind: row.owner_kind, id: row.owner_id });

type Executor = (row: repo.DatabaseRow, params: Record<string, unknown>) => Promise<ExecutorOutput>;

/** What each command does to the server, and what the store records once it has happened. */
export function executors(
  provider: DatabaseProvider,
  db: Db,
  config: DatabasesDeps["config"],
  secrets: SecretBox,
  apps: AppsSide,
  /** ends, after the grace the owner's apps have to roll, the sessions a rotation left them (jobs.ts) */
  endOldSessionsLater: (row: repo.DatabaseRow, changedAt: Date) => Promise<void> = async () => {},
): Record<string, Executor> {
  const recordBackup = async (row: repo.DatabaseRow, b: BackupInfo) => {
    await repo.upsertBackup(db, row.account_id, {
      id: b.id,
      databaseId: row.id,
      kind: b.kind,
      label: b.label,
      status: b.status,
      sizeBytes: b.sizeBytes,
      startedAt: b.startedAt,
      finishedAt: b.finishedAt,
      startLsn: b.startLsn,
      stopLsn: b.stopLsn,
    });
  };
  const branchInto = async (row: repo.DatabaseRow, reset: boolean): Promise<ExecutorOutput> => {
    if (!row.parent_id) throw new ProviderError("bad_spec", "this database is not a branch");
    // the copy starts the branch's history again: backups of an earlier one are dropped with it (branch.ts)
    await repo.deleteAllBackups(db, row.id);
    const made = await provider.branch(row.id, {
      parentId: row.parent_id,
      targetTime: reset ? undefined : (row.branch_target ?? undefined),
      spec: instanceSpec(row, config, secrets),
      reset,
    });
    if (row.desired_state === "paused") await provider.stop(row.id);
    return {
      patch: {
        state: row.desired_state === "paused" ? "paused" : "running",
        status_reason: null,
        host: made.endpoint.host,
        port: made.endpoint.port,
        branched_at: new Date(made.branchedAt),
        ha_enabled: false, // a copy has no standby (a reset drops the branch's); its pool setting is kept
      },
      result: {
        ...{ method: made.method, copy: made.copy, from_backup: made.fromBackupId, branched_at: made.branchedAt },
        timings_ms: made.timings,
      },
      // the branch's own archive starts here: its first base backup is the start of its recoverable window
      followUps: row.desired_state === "paused" ? [] : ["base_backup"],
    };
  };
  return {
    // scale-to-zero of dev databases: idle_stop (src/databases/idle)
    ...idleExecutors(provider, db),
    // the first command of an instance created through a process of another host (placement.ts)
    reserve: async (row) => {
      const ep = await provider.reserve(instanceSpec(row, config, secrets));
      return { patch: { host: ep.host, port: ep.port }, followUps: [row.parent_id ? "branch" : "provision"] };
    },
    provision: async (row) => {
      // provision installs the default extensions itself (a prepared spare has them already)
      const ep = await provider.provision(instanceSpec(row, config, secrets));
      if (row.desired_state === "paused") await provider.stop(row.id);
      // the first base backup follows at once (without delaying "running"): PITR and WAL continuity checks start from it
      return {
        patch: {
          state: row.desired_state === "paused" ? "paused" : "running",
          host: ep.host,
          port: ep.port,
          status_reason: null,
        },
        followUps: row.desired_state === "paused" ? [] : ["base_backup"],
      };
    },
    start: async (row) => {
      await provider.start(row.id);
      return { patch: { state: "running", status_reason: null } };
    },
    stop: async (row) => {
      await provider.stop(row.id);
      return { patch: { state: "paused" } };
    },
    remove: async (row) => {
      // nothing on this host (never provisioned, or already purged): there is no server to stop
      await provider.remove(row.id).catch((err) => {
        if (!isProviderError(err, "not_found")) throw err;
      });
      // already recorded when the DELETE was accepted; written again so a row left in another state converges
      return { patch: { state: "removed" } };
    },
    purge: async (row) => {
      await provider.purge(row.id);
      await repo.deleteAllBackups(db, row.id);
      return { patch: { purged_at: new Date() } as Partial<repo.DatabaseRow> };
    },
    snapshot: async (row, params) => {
      const b = await provider.snapshot(row.id, (params.label as string | null) ?? undefined);
      await recordBackup(row, b);
      return { result: { backup_id: b.id } };
    },
    base_backup: async (row) => {
      const b = await provider.baseBackup(row.id);
      await recordBackup(row, b);
      return { result: { backup_id: b.id } };
    },
    // the password in force is kept (sealed) for attached apps, recorded with the command's success; sessions
    // from the owner's app networks last until their apps are rolled onto it (attachments.ts)
    rotate_password: async (row, params) => {
      const password = secrets.open(String(params.password), SEALED.commandPassword);
      const keepFrom = await appNetworks(db, apps.attachments, ownerOf(row)).catch(() => []);
      const { changedAt } = await provider.rotatePassword(row.id, "owner", password, { keepFrom });
      if (keepFrom.length) await endOldSessionsLater(row, changedAt);
      return { patch: { app_password: secrets.seal(password, SEALED.appPassword) } };
    },
    // a non-empty allowlist also admits the owner's app networks as they are now (attachments.ts)
    allowlist: async (row) => {
      const nets = row.allowlist.length ? await appNetworks(db, apps.attachments, ownerOf(row)) : [];
      await provider.setAllowlist(row.id, effectiveAllowlist(row.allowlist, nets));
      return { patch: { app_cidrs: row.allowlist.length ? nets : null } };
    },
    // rolls the attached apps after a rotation, when doing so at once failed (service.ts rotatePassword)
    refresh_apps: async (row) => ({ result: { apps: await apps.attachments.refresh(db, "databases", row.id) } }),
    extensions: async (row, params) => {
      const installed = await provider.ensureExtensions(row.id, params.names as string[], {
        shared: row.size === "dev",
      });
      return { patch: { extensions: installed } };
    },
    resize: async (row, params) => {
      const size = params.size as repo.DatabaseRow["size"];
      // storage never shrinks here: the watcher may have grown it since the resize was asked for
      const storageGb = Math.max(Number(params.storage_gb), row.storage_gb);
      await provider.applySize(row.id, size);
      await provider.setStorageQuota(row.id, storageGb);
      return { patch: { size, storage_gb: storageGb } };
    },
    // the local provider keeps the standby on the primary's host
    ha_enable: async (row) => ({
      result: { ...(await provider.enableStandby(row.id)) },
      patch: { standby_host_id: row.host_id },
    }),
    ha_rebuild: async (row) => ({
      result: { ...(await provider.rebuildStandby(row.id)) },
      patch: { standby_host_id: row.host_id },
    }),
    ha_switchover: async (row) => ({ result: { ...(await provider.switchover(row.id)) } }),
    ha_disable: async (row) => {
      await provider.disableStandby(row.id);
      return { patch: { standby_host_id: null } };
    },
    pool_enable: async (row) => ({ result: { ...(await provider.enablePool(row.id)) } }),
    pool_disable: async (row) => {
      await provider.disablePool(row.id);
      return {};
    },
    // a branch made (or, reset, made again at now) as a copy of its parent (provider/local/branch.ts)
    branch: (row) => branchInto(row, false),
    reset: (row) => branchInto(row, true),
    restore: async (row, params) => {
      const target = params.target_time ? new Date(String(params.target_time)) : undefined;
      // a soft-deleted instance keeps its data directory: without a target time, bringing it back is starting it
      const wasRemoved = params.from_state === "removed" || (await provider.status(row.id)).removed;
      await provider.start(row.id); // also lets recoverTo archive every change up to now before it stops the server
      let res: { fromBackupId: string | null; targetTime: string | null; timeline: number | null } = {
        fromBackupId: null,
        targetTime: null,
        timeline: null,
      };
      if (target || !wasRemoved) res = await provider.recoverTo(row.id, { targetTime: target });
      const st = await provider.status(row.id);
      return {
        patch: {
          state: "running",
          removed_at: null,
          status_reason: null,
          ha_enabled: st.standby !== null,
          pool_enabled: st.pool?.enabled ?? false,
        },
        result: {
          from_backup: res.fromBackupId,
          target_time: res.targetTime,
          timeline: res.timeline,
          recovered: res.fromBackupId !== null,
        },
        // a recovery starts a new timeline: a fresh base backup keeps later recoveries short and continuity checks simple
        followUps: res.fromBackupId ? ["base_backup"] : [],
      };
    },
  };
}
