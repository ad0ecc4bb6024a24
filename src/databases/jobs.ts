import type { Db } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import { inTransaction } from "../store/db.js";
import { isProviderError, type BackupInfo, type DatabaseProvider } from "./provider/types.js";
import { COMMAND_JOB, instanceSpec, REMOVAL_GRACE_DAYS, type DatabasesDeps } from "./service.js";
import * as repo from "./repo.js";

type Executor = (row: repo.DatabaseRow, params: Record<string, unknown>) => Promise<{ patch?: Partial<repo.DatabaseRow>; result?: Record<string, unknown> }>;

/** What each command does to the server, and what the store records once it has happened. */
function executors(provider: DatabaseProvider, db: Db, config: DatabasesDeps["config"]): Record<string, Executor> {
  const recordBackup = async (row: repo.DatabaseRow, b: BackupInfo) => {
    await repo.upsertBackup(db, row.account_id, {
      id: b.id, databaseId: row.id, kind: b.kind, label: b.label, status: b.status, sizeBytes: b.sizeBytes,
      startedAt: b.startedAt, finishedAt: b.finishedAt, startLsn: b.startLsn, stopLsn: b.stopLsn,
    });
  };
  return {
    provision: async (row) => {
      if (row.desired_state === "removed") return {};
      const ep = await provider.provision(instanceSpec(row, config));
      await provider.ensureExtensions(row.id, [], { shared: row.size === "dev" });
      if (row.desired_state === "paused") await provider.stop(row.id);
      return { patch: { state: row.desired_state === "paused" ? "paused" : "running", host: ep.host, port: ep.port, status_reason: null } };
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
      await provider.applySize(row.id, size);
      await provider.setStorageQuota(row.id, Number(params.storage_gb));
      return { patch: { size, storage_gb: Number(params.storage_gb) } };
    },
    ha_enable: async (row) => ({ result: { ...(await provider.enableStandby(row.id)) } }),
    ha_rebuild: async (row) => ({ result: { ...(await provider.rebuildStandby(row.id)) } }),
    ha_switchover: async (row) => ({ result: { ...(await provider.switchover(row.id)) } }),
    ha_disable: async (row) => {
      await provider.disableStandby(row.id);
      return {};
    },
    pool_enable: async (row) => ({ result: { ...(await provider.enablePool(row.id)) } }),
    pool_disable: async (row) => {
      await provider.disablePool(row.id);
      return {};
    },
    restore: async (row, params) => {
      if (row.state === "removed" || row.desired_state === "running") await provider.start(row.id).catch(() => {});
      const res = await provider.recoverTo(row.id, { targetTime: params.target_time ? new Date(String(params.target_time)) : undefined });
      return { patch: { state: "running", removed_at: null, status_reason: null }, result: { from_backup: res.fromBackupId, target_time: res.targetTime } };
    },
  };
}

/** Passwords in command parameters are kept only until applied. */
const SECRET_PARAMS = ["password"];

export function defineDatabaseJobs(queue: JobQueue, deps: Pick<DatabasesDeps, "db" | "config" | "provider">): void {
  const { db, provider, config } = deps;
  const run = executors(provider, db, config);

  queue.define<{ commandId: string }>({
    name: COMMAND_JOB,
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
          await lock.query("UPDATE database_commands SET status = 'running', started_at = coalesce(started_at, now()), attempts = attempts + 1 WHERE id = $1", [commandId]);
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
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            // provider refusals are final; other failures are retried by the queue, then recorded
            const final = isProviderError(err) && ["bad_spec", "bad_cidr", "extension_not_allowed", "ha_not_supported", "ha_not_enabled", "pgbouncer_missing", "not_found", "backup_not_found", "no_base_backup"].includes(err.code);
            await lock.query(
              `UPDATE database_commands SET status = $2, error = $3, finished_at = CASE WHEN $2 = 'failed' THEN now() END,
                 params = CASE WHEN $2 = 'failed' THEN params - $4::text[] ELSE params END WHERE id = $1`,
              [commandId, final ? "failed" : "queued", message, SECRET_PARAMS],
            );
            if (cmd.kind === "provision" && final) await repo.updateDatabase(lock, row.id, { state: "failed", status_reason: message });
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
      await db.query("UPDATE database_commands SET status = 'failed', finished_at = now(), error = $2, params = params - $3::text[] WHERE id = $1 AND status <> 'succeeded'", [commandId, message, SECRET_PARAMS]);
    },
  });

  queue.define({
    name: "databases.reconcile",
    handler: async () => {
      await requeueLostCommands(db, queue);
      await reconcileStates(db, queue);
    },
  });

  queue.define({
    name: "databases.daily-base-backup",
    handler: async () => {
      const { rows } = await db.query<{ id: string }>("SELECT id FROM databases WHERE state = 'running'");
      for (const r of rows) await enqueueSystem(db, queue, r.id, "base_backup");
    },
  });

  queue.define({
    name: "databases.watch",
    handler: async () => {
      const { rows } = await db.query<repo.DatabaseRow>("SELECT * FROM databases WHERE state = 'running'");
      for (const row of rows) {
        try {
          const st = await provider.enforceStorageQuota(row.id);
          const reason = st.readOnly?.reason ?? null;
          if (reason !== row.status_reason) await repo.updateDatabase(db, row.id, { status_reason: reason });
          for (const wal of await provider.listArchivedWal(row.id)) {
            await repo.upsertBackup(db, row.account_id, {
              id: wal.id, databaseId: row.id, kind: "wal", label: null, status: wal.status, sizeBytes: wal.sizeBytes,
              startedAt: wal.startedAt, finishedAt: wal.finishedAt, startLsn: wal.startLsn, stopLsn: wal.stopLsn,
            });
          }
          await provider.pruneBackups(row.id, row.pitr_retention_days);
        } catch {
          // one instance's trouble must not stop the watcher for the others
        }
      }
    },
  });

  queue.define({
    name: "databases.purge-removed",
    handler: async () => {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM databases WHERE state = 'removed' AND purged_at IS NULL AND removed_at < now() - $1 * interval '1 day'`,
        [REMOVAL_GRACE_DAYS],
      );
      for (const r of rows) await enqueueSystem(db, queue, r.id, "purge");
    },
  });
}

async function enqueueSystem(db: Db, queue: JobQueue, databaseId: string, kind: string): Promise<void> {
  const open = await db.query("SELECT 1 FROM database_commands WHERE database_id = $1 AND kind = $2 AND status IN ('queued', 'running')", [databaseId, kind]);
  if (open.rowCount) return;
  const { randomUUID } = await import("node:crypto");
  const id = randomUUID();
  await repo.insertCommand(db, { id, databaseId, kind, params: {} });
  await queue.send(COMMAND_JOB, { commandId: id });
}

/** Commands whose job was never queued (crash between commit and send) or whose worker died get a new job. */
async function requeueLostCommands(db: Db, queue: JobQueue): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT c.id FROM database_commands c
      WHERE (c.status = 'queued' AND c.created_at < now() - interval '1 minute')
         OR (c.status = 'running' AND c.started_at < now() - interval '20 minutes')`,
  );
  for (const r of rows) await queue.send(COMMAND_JOB, { commandId: r.id }, { singletonKey: `cmd:${r.id}` });
}

/** Instances whose server should be in another state, with nothing queued to get it there. */
async function reconcileStates(db: Db, queue: JobQueue): Promise<void> {
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
export async function reconcileNow(db: Db, queue: JobQueue, provider: DatabaseProvider): Promise<void> {
  const { rows } = await db.query<{ id: string; state: string }>("SELECT id, state FROM databases WHERE state IN ('running') AND purged_at IS NULL");
  for (const r of rows) {
    const status = await provider.status(r.id).catch(() => null);
    if (status && !status.running) await enqueueSystem(db, queue, r.id, "start");
  }
  await requeueLostCommands(db, queue);
  await reconcileStates(db, queue);
}
