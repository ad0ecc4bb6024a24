import type { Db } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { JobSpec } from "../kernel/area.js";
import { inTransaction } from "../store/db.js";
import { isProviderError, type BackupInfo, type DatabaseProvider } from "./provider/types.js";
import { COMMAND_JOB, instanceSpec, REMOVAL_GRACE_DAYS, type DatabasesDeps } from "./service.js";
import * as repo from "./repo.js";
import { databasesOnHost, markCommandsOnUnavailableHosts, sendCommand } from "./placement.js";

type ExecutorOutput = {
  patch?: Partial<repo.DatabaseRow>;
  result?: Record<string, unknown>;
  /** System commands queued once this one is recorded as succeeded (e.g. a base backup after provisioning). */
  followUps?: string[];
};
type Executor = (row: repo.DatabaseRow, params: Record<string, unknown>) => Promise<ExecutorOutput>;

/** What each command does to the server, and what the store records once it has happened. */
function executors(provider: DatabaseProvider, db: Db, config: DatabasesDeps["config"]): Record<string, Executor> {
  const recordBackup = async (row: repo.DatabaseRow, b: BackupInfo) => {
    await repo.upsertBackup(db, row.account_id, {
      id: b.id, databaseId: row.id, kind: b.kind, label: b.label, status: b.status, sizeBytes: b.sizeBytes,
      startedAt: b.startedAt, finishedAt: b.finishedAt, startLsn: b.startLsn, stopLsn: b.stopLsn,
    });
  };
  return {
    // the first command of an instance created through a process of another host (placement.ts)
    reserve: async (row) => {
      const ep = await provider.reserve(instanceSpec(row, config));
      return { patch: { host: ep.host, port: ep.port }, followUps: ["provision"] };
    },
    provision: async (row) => {
      if (row.desired_state === "removed") return {};
      const ep = await provider.provision(instanceSpec(row, config));
      await provider.ensureExtensions(row.id, [], { shared: row.size === "dev" });
      if (row.desired_state === "paused") await provider.stop(row.id);
      // the first base backup follows at once (without delaying "running"): PITR and WAL continuity checks start from it
      return {
        patch: { state: row.desired_state === "paused" ? "paused" : "running", host: ep.host, port: ep.port, status_reason: null },
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
      await provider.remove(row.id);
      return {};
    },
    purge: async (row) => {
      await provider.purge(row.id);
      await db.query("DELETE FROM database_backups WHERE database_id = $1", [row.id]);
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
    rotate_password: async (row, params) => {
      await provider.rotatePassword(row.id, "owner", String(params.password));
      return {};
    },
    allowlist: async (row) => {
      await provider.setAllowlist(row.id, row.allowlist.map((e) => e.cidr));
      return {};
    },
    extensions: async (row, params) => {
      const installed = await provider.ensureExtensions(row.id, params.names as string[], { shared: row.size === "dev" });
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
    ha_enable: async (row) => ({ result: { ...(await provider.enableStandby(row.id)) }, patch: { standby_host_id: row.host_id } }),
    ha_rebuild: async (row) => ({ result: { ...(await provider.rebuildStandby(row.id)) }, patch: { standby_host_id: row.host_id } }),
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
    restore: async (row, params) => {
      const target = params.target_time ? new Date(String(params.target_time)) : undefined;
      // a soft-deleted instance keeps its data directory: without a target time, bringing it back is starting it
      const wasRemoved = params.from_state === "removed" || (await provider.status(row.id)).removed;
      await provider.start(row.id); // also lets recoverTo archive every change up to now before it stops the server
      let res: { fromBackupId: string | null; targetTime: string | null; timeline: number | null } = { fromBackupId: null, targetTime: null, timeline: null };
      if (target || !wasRemoved) res = await provider.recoverTo(row.id, { targetTime: target });
      const st = await provider.status(row.id);
      return {
        patch: { state: "running", removed_at: null, status_reason: null, ha_enabled: st.standby !== null, pool_enabled: st.pool?.enabled ?? false },
        result: { from_backup: res.fromBackupId, target_time: res.targetTime, timeline: res.timeline, recovered: res.fromBackupId !== null },
        // a recovery starts a new timeline: a fresh base backup keeps later recoveries short and continuity checks simple
        followUps: res.fromBackupId ? ["base_backup"] : [],
      };
    },
  };
}

/** Passwords in command parameters are kept only until applied. */
const SECRET_PARAMS = ["password"];

export function databaseJobs(queue: Pick<JobQueue, "send" | "hostAvailable">, deps: Pick<DatabasesDeps, "db" | "config" | "provider"> & { hostId: string }): JobSpec<any>[] {
  const { db, provider, config, hostId } = deps;
  const specs: JobSpec<any>[] = [];
  const run = executors(provider, db, config);

  specs.push({
    name: COMMAND_JOB,
    perHost: true, // the instance's files live on its host: only that host's workers run its commands
    concurrency: 2,
    retryLimit: 3,
    handler: async ({ commandId }) => {
      // one command per instance at a time, across every worker process
      const lock = await db.connect();
      try {
        const cmd = await repo.findCommand(lock, commandId);
        if (!cmd || cmd.status === "succeeded" || cmd.status === "failed") return;
        await lock.query("SELECT pg_advisory_lock(hashtext('database:' || $1))", [cmd.database_id]);
        try {
          const row = await repo.findDatabaseById(lock, cmd.database_id);
          const fresh = await repo.findCommand(lock, commandId);
          if (!row || !fresh || fresh.status === "succeeded" || fresh.status === "failed") return;
          if (row.host_id !== hostId) return; // a job that reached the wrong host: the owner's own job runs it
          await lock.query("UPDATE database_commands SET status = 'running', error = NULL, started_at = coalesce(started_at, now()), attempts = attempts + 1 WHERE id = $1", [commandId]);
          const exec = run[cmd.kind];
          try {
            if (!exec) throw new Error(`unknown command ${cmd.kind}`);
            const out = await exec(row, cmd.params);
            await inTransaction(db, async (tx) => {
              if (out.patch) await repo.updateDatabase(tx, row.id, out.patch);
              await tx.query(
                `UPDATE database_commands SET status = 'succeeded', finished_at = now(), result = $2, params = params - $3::text[] WHERE id = $1`,
                [commandId, out.result ?? null, SECRET_PARAMS],
              );
            });
            // lost follow-ups are harmless: the daily base backup and the watcher cover for them
            for (const kind of out.followUps ?? []) await enqueueSystem(db, queue, row.id, kind).catch(() => {});
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            // provider refusals are final; other failures are retried by the queue, then recorded
            const final = isProviderError(err) && ["bad_spec", "capacity", "bad_cidr", "extension_not_allowed", "ha_not_supported", "ha_not_enabled", "pgbouncer_missing", "not_found", "backup_not_found", "no_base_backup"].includes(err.code);
            await lock.query(
              `UPDATE database_commands SET status = $2, error = $3, finished_at = CASE WHEN $2 = 'failed' THEN now() END,
                 params = CASE WHEN $2 = 'failed' THEN params - $4::text[] ELSE params END WHERE id = $1`,
              [commandId, final ? "failed" : "queued", message, SECRET_PARAMS],
            );
            if ((cmd.kind === "provision" || cmd.kind === "restore") && final) await repo.updateDatabase(lock, row.id, { state: "failed", status_reason: message });
            if (!final) throw err;
          }
        } finally {
          await lock.query("SELECT pg_advisory_unlock(hashtext('database:' || $1))", [cmd.database_id]).catch(() => {});
        }
      } finally {
        lock.release();
      }
    },
    onFinalFailure: async ({ commandId }, message) => {
      const { rows } = await db.query<{ database_id: string; kind: string }>(
        "UPDATE database_commands SET status = 'failed', finished_at = now(), error = $2, params = params - $3::text[] WHERE id = $1 AND status <> 'succeeded' RETURNING database_id, kind",
        [commandId, message, SECRET_PARAMS],
      );
      // a restore that gave up leaves the instance in no usable state: say so instead of "creating" forever
      if (rows[0]?.kind === "restore") await repo.updateDatabase(db, rows[0].database_id, { state: "failed", status_reason: `restore failed: ${message}` });
    },
  });

  specs.push({
    name: "databases.reconcile",
    cron: "* * * * *",
    handler: async () => {
      await requeueLostCommands(db, queue);
      await reconcileStates(db, queue);
      await markCommandsOnUnavailableHosts(db, queue);
    },
  });

  specs.push({
    name: "databases.daily-base-backup",
    cron: "0 3 * * *",
    handler: async () => {
      const { rows } = await db.query<{ id: string }>("SELECT id FROM databases WHERE state = 'running'");
      for (const r of rows) await enqueueSystem(db, queue, r.id, "base_backup");
    },
  });

  // each host watches the instances it holds
  specs.push({ name: "databases.watch", cron: "* * * * *", perHost: true, policy: "stately", handler: async () => watchDatabases({ db, provider }, await databasesOnHost(db, hostId, ["running"])) });

  specs.push({
    name: "databases.purge-removed",
    cron: "23 * * * *",
    handler: async () => {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM databases WHERE state = 'removed' AND purged_at IS NULL AND removed_at < now() - $1 * interval '1 day'`,
        [REMOVAL_GRACE_DAYS],
      );
      for (const r of rows) await enqueueSystem(db, queue, r.id, "purge");
    },
  });
  return specs;
}

export async function enqueueSystem(db: Db, queue: Pick<JobQueue, "send">, databaseId: string, kind: string): Promise<void> {
  const open = await db.query("SELECT 1 FROM database_commands WHERE database_id = $1 AND kind = $2 AND status IN ('queued', 'running')", [databaseId, kind]);
  if (open.rowCount) return;
  const { randomUUID } = await import("node:crypto");
  const id = randomUUID();
  await repo.insertCommand(db, { id, databaseId, kind, params: {} });
  await sendCommand(db, queue, COMMAND_JOB, id);
}

/**
 * Commands whose job was never queued (crash between commit and send), and commands marked running
 * whose worker is gone. A worker holds the instance's advisory lock for as long as it runs a command,
 * on its own connection: when that lock is free, nobody runs it (a killed process's locks die with
 * its connections), so it is queued again at once instead of after the job's expiry.
 */
async function requeueLostCommands(db: Db, queue: Pick<JobQueue, "send">, atStartup = false): Promise<void> {
  // at start-up a queued command may have lost its job to the killed process (fetched, never run): a duplicate job is harmless
  const { rows } = await db.query<{ id: string; database_id: string; status: string; stale: boolean }>(
    `SELECT c.id, c.database_id, c.status, c.started_at < now() - interval '20 minutes' AS stale FROM database_commands c
      WHERE (c.status = 'queued' AND ($1 OR c.created_at < now() - interval '1 minute')) OR c.status = 'running'`,
    [atStartup],
  );
  for (const r of rows) {
    if (r.status === "running" && !r.stale && !(await lockIsFree(db, r.database_id))) continue;
    await sendCommand(db, queue, COMMAND_JOB, r.id, { singletonKey: `cmd:${r.id}`, resend: true });
  }
}

async function lockIsFree(db: Db, databaseId: string): Promise<boolean> {
  const c = await db.connect();
  try {
    const got = (await c.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext('database:' || $1)) AS ok", [databaseId])).rows[0].ok;
    if (got) await c.query("SELECT pg_advisory_unlock(hashtext('database:' || $1))", [databaseId]);
    return got;
  } finally {
    c.release();
  }
}

/** Instances whose server should be in another state, with nothing queued to get it there. */
async function reconcileStates(db: Db, queue: Pick<JobQueue, "send">): Promise<void> {
  const { rows } = await db.query<{ id: string; desired_state: string; state: string }>(
    `SELECT d.id, d.desired_state, d.state FROM databases d
      WHERE d.purged_at IS NULL AND d.state <> 'failed'
        AND NOT EXISTS (SELECT 1 FROM database_commands c WHERE c.database_id = d.id AND c.status IN ('queued', 'running'))
        AND ((d.state = 'creating') OR (d.desired_state = 'running' AND d.state = 'paused') OR (d.desired_state = 'paused' AND d.state = 'running'))`,
  );
  for (const r of rows) {
    const kind = r.state === "creating" ? "provision" : r.desired_state === "running" ? "start" : "stop";
    await enqueueSystem(db, queue, r.id, kind);
  }
}

/** After a restart, every server is brought to its recorded state (the reconciler also runs each minute). */
export async function reconcileNow(db: Db, queue: Pick<JobQueue, "send" | "hostAvailable">, provider: DatabaseProvider, hostId: string): Promise<void> {
  for (const id of await databasesOnHost(db, hostId, ["running"])) {
    const status = await provider.status(id).catch(() => null);
    if (status && !status.running) await enqueueSystem(db, queue, id, "start");
  }
  await requeueLostCommands(db, queue, true);
  await reconcileStates(db, queue);
}

const GiB = 1024 ** 3;
/** Storage autoscale defaults when the settings leave a field out (PATCH /v1/databases/{id}/storage). */
export const AUTOSCALE_DEFAULTS = { threshold_pct: 80, step_gb: 10, max_gb: 16384 } as const;

export interface WatchDeps {
  db: Db;
  provider: DatabaseProvider;
}

/**
 * One pass of the watcher over every running instance not busy with a command: storage autoscale, then the quota (read-only
 * above it), the WAL index and retention, then the WAL continuity check whose result GET shows as
 * `backup_health`. Exported so it can be run on demand; the `databases.watch` job runs it every minute.
 */
export async function watchDatabases({ db, provider }: WatchDeps, onlyIds?: string[]): Promise<void> {
  const { rows } = await db.query<repo.DatabaseRow>(
    "SELECT * FROM databases WHERE state = 'running' AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))", [onlyIds ?? null],
  );
  for (const row of rows) {
    // an instance with a command in flight (switchover, resize, restore…) is left alone until the next pass
    const lock = await db.connect();
    try {
      const got = (await lock.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext('database:' || $1)) AS ok", [row.id])).rows[0].ok;
      if (!got) continue;
      try {
        await watchOne(db, provider, row);
      } catch {
        // one instance's trouble must not stop the watcher for the others
      } finally {
        await lock.query("SELECT pg_advisory_unlock(hashtext('database:' || $1))", [row.id]).catch(() => {});
      }
    } finally {
      lock.release();
    }
  }
}

async function watchOne(db: Db, provider: DatabaseProvider, row: repo.DatabaseRow): Promise<void> {
  let st = await provider.enforceStorageQuota(row.id);
  let storageGb = row.storage_gb;
  // the store is the truth: a quota change recorded but not applied (crash in between) is applied now
  if (st.quotaBytes !== Math.round(storageGb * GiB)) st = await provider.setStorageQuota(row.id, storageGb);
  const grown = await autoscaleStorage(db, row, st.usageBytes);
  if (grown !== null) {
    storageGb = grown;
    st = await provider.setStorageQuota(row.id, grown);
  }
  const reason = st.readOnly?.reason ?? null;
  if (reason !== row.status_reason) await repo.updateDatabase(db, row.id, { status_reason: reason });

  for (const wal of await provider.listArchivedWal(row.id)) {
    await repo.upsertBackup(db, row.account_id, {
      id: wal.id, databaseId: row.id, kind: "wal", label: null, status: wal.status, sizeBytes: wal.sizeBytes,
      startedAt: wal.startedAt, finishedAt: wal.finishedAt, startLsn: wal.startLsn, stopLsn: wal.stopLsn,
    });
  }
  const pruned = await provider.pruneBackups(row.id, row.pitr_retention_days);
  if (pruned.removedBackups.length) {
    await db.query("DELETE FROM database_backups WHERE database_id = $1 AND id = ANY($2)", [row.id, pruned.removedBackups]);
  }
  if (pruned.removedWal) {
    const kept = new Set((await provider.listArchivedWal(row.id)).map((w) => w.id));
    const { rows: indexed } = await db.query<{ id: string }>("SELECT id FROM database_backups WHERE database_id = $1 AND kind = 'wal'", [row.id]);
    const gone = indexed.map((r) => r.id).filter((id) => !kept.has(id));
    if (gone.length) await db.query("DELETE FROM database_backups WHERE database_id = $1 AND id = ANY($2)", [row.id, gone]);
  }

  // stored checksums re-checked once per backup (base backups and snapshots), after it was taken
  const { rows: unverified } = await db.query<{ id: string }>(
    "SELECT id FROM database_backups WHERE database_id = $1 AND kind IN ('base', 'snapshot') AND verified_at IS NULL ORDER BY finished_at LIMIT 3", [row.id],
  );
  for (const b of unverified) {
    const v = await provider.verifyBackup(row.id, b.id).catch(() => null);
    if (v) await db.query("UPDATE database_backups SET verified_at = now(), verify_ok = $3 WHERE database_id = $1 AND id = $2", [row.id, b.id, v.ok]);
  }
  const { rows: corrupt } = await db.query<{ id: string }>(
    "SELECT id FROM database_backups WHERE database_id = $1 AND verify_ok = false ORDER BY finished_at", [row.id],
  );

  const wc = await provider.walContinuity(row.id);
  const health: repo.BackupHealth = {
    ok: wc.ok && corrupt.length === 0,
    problem: wc.problem ?? (corrupt.length ? `${corrupt.length} backup(s) no longer match their checksums (${corrupt.map((c) => c.id).join(", ")})` : null),
    base_backup_id: wc.baseBackupId, timeline: wc.timeline, from_segment: wc.fromSegment, to_segment: wc.toSegment,
    checked_segments: wc.checkedSegments, missing_segments: wc.missing, pending_segments: wc.pending,
    archiver_failure: wc.archiverFailure, corrupt_backups: corrupt.map((c) => c.id), checked_at: new Date().toISOString(),
  };
  await repo.updateDatabase(db, row.id, { backup_health: health, storage_used_bytes: st.usageBytes, health_checked_at: new Date() });
}

/**
 * Grows storage_gb by step_gb (up to max_gb) once usage crosses threshold_pct of it. The growth is
 * recorded in the store first, conditionally on the value read, so two watchers never add two steps;
 * it shows among the instance's commands as `storage_autoscale`. Returns the new size, or null.
 */
export async function autoscaleStorage(db: Db, row: repo.DatabaseRow, usageBytes: number): Promise<number | null> {
  const cfg = row.storage_autoscale as { enabled?: boolean; threshold_pct?: number; step_gb?: number; max_gb?: number };
  if (!cfg?.enabled) return null;
  const threshold = cfg.threshold_pct ?? AUTOSCALE_DEFAULTS.threshold_pct;
  const step = cfg.step_gb ?? AUTOSCALE_DEFAULTS.step_gb;
  const max = cfg.max_gb ?? AUTOSCALE_DEFAULTS.max_gb;
  if (row.storage_gb >= max || usageBytes < (row.storage_gb * GiB * threshold) / 100) return null;
  const next = Math.min(row.storage_gb + step, max);
  const { randomUUID } = await import("node:crypto");
  return inTransaction(db, async (tx) => {
    const res = await tx.query("UPDATE databases SET storage_gb = $3 WHERE id = $1 AND storage_gb = $2", [row.id, row.storage_gb, next]);
    if (!res.rowCount) return null;
    const id = randomUUID();
    await repo.insertCommand(tx, { id, databaseId: row.id, kind: "storage_autoscale", params: { threshold_pct: threshold, step_gb: step, max_gb: max } });
    await tx.query(
      "UPDATE database_commands SET status = 'succeeded', started_at = now(), finished_at = now(), attempts = 1, result = $2 WHERE id = $1",
      [id, { from_gb: row.storage_gb, to_gb: next, usage_bytes: usageBytes }],
    );
    return next;
  });
}
