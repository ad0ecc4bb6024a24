import type { Db, Queryable } from "../store/db.js";
import type { JobQueue } from "../jobs/queue.js";
import type { JobSpec } from "../kernel/area.js";
import { inTransaction } from "../store/db.js";
import { recordEvent } from "../events/public.js";
import { isProviderError, type DatabaseProvider } from "./provider/types.js";
import { COMMAND_JOB, REMOVAL_GRACE_DAYS, type DatabasesDeps } from "./service.js";
import { executors } from "./command-executors.js";
import * as repo from "./repo.js";
import * as commands from "./commands-repo.js";
import { sessionLock, sessionUnlock, trySessionLock } from "../store/locks.js";
import { watchDatabases } from "./watch.js";
import { databasesOnHost, markCommandsOnUnavailableHosts, sendCommand } from "./placement.js";
import { driftedAllowlists, END_OLD_SESSIONS_JOB, NO_APPS, OWNER_NETWORKS_JOB, type AppsSide } from "./attachments.js";
import type { Owner } from "../kernel/owner.js";

/** How long a rotation leaves the owner's app sessions of the old password alive by default (DB_APP_SESSION_GRACE_S). */
export const DEFAULT_APP_SESSION_GRACE_S = 120;

/** The desired state each lifecycle command works towards. */
const AIMS: Record<string, repo.DatabaseRow["desired_state"]> = {
  start: "running",
  stop: "paused",
  idle_stop: "idle_stopped",
  remove: "removed",
  restore: "running",
  purge: "removed",
  branch: "running",
  reset: "running",
};
/** Commands that end the `creating` state they were asked in: a final failure leaves the instance `failed`. */
const CREATING = new Set(["provision", "restore", "branch", "reset"]);
/**
 * A snapshot the user asked for before deleting is still taken while the server is up (it is read-only and never
 * starts the server; it is kept with the other backups for the grace window). System base backups are not.
 */
const RUNS_ON_DELETED = new Set(["snapshot"]);

/**
 * Why a command no longer applies, or null. desired_state is the truth, and commands can run in another order
 * than they were asked for (two workers, redelivery after a crash): a lifecycle command runs only while
 * desired_state is still the one it works towards (a stop queued before a DELETE never runs after it, a start
 * never starts a deleted server again), and nothing else touches the server of a deleted instance (its remove
 * is queued), except a snapshot while the server is still up. Checked under the instance's lock, on a fresh row.
 */
async function supersededReason(
  provider: DatabaseProvider,
  kind: string,
  row: repo.DatabaseRow,
): Promise<string | null> {
  const aim = AIMS[kind];
  if (aim)
    return row.desired_state === aim
      ? null
      : `superseded: the database's desired state became "${row.desired_state}" after this ${kind} was asked for`;
  if (row.desired_state !== "removed") return null;
  if (RUNS_ON_DELETED.has(kind) && (await provider.status(row.id).catch(() => null))?.running) return null;
  return `superseded: the database was deleted before this ${kind} ran`;
}

export function databaseJobs(
  queue: Pick<JobQueue, "send" | "hostAvailable">,
  deps: Pick<DatabasesDeps, "db" | "config" | "provider" | "secrets"> & {
    hostId: string;
    /** the apps side of attachments (the kernel); none: no apps attach */
    apps?: AppsSide;
    /** how long a rotation leaves the old sessions of the owner's apps alive, for their roll (default 120 s) */
    appSessionGraceS?: number;
  },
): JobSpec<any>[] {
  const { db, provider, config, hostId } = deps;
  const apps = deps.apps ?? NO_APPS;
  const specs: JobSpec<any>[] = [];
  const grace = deps.appSessionGraceS ?? DEFAULT_APP_SESSION_GRACE_S;
  // when the job cannot be queued the sessions end at once: the old password must not live on unbounded
  const endOldSessionsLater = async (row: repo.DatabaseRow, changedAt: Date) => {
    const data = { databaseId: row.id, role: "owner", before: changedAt.toISOString() };
    const sent = await queue
      .send(END_OLD_SESSIONS_JOB, data, { host: row.host_id ?? hostId, startAfterSeconds: grace })
      .catch(() => null);
    if (!sent) await provider.endSessionsBefore(row.id, "owner", changedAt);
  };
  const run = executors(provider, db, config, deps.secrets, apps, endOldSessionsLater);

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
        await sessionLock(lock, `database:${cmd.database_id}`);
        try {
          const row = await repo.findDatabaseById(lock, cmd.database_id);
          const fresh = await repo.findCommand(lock, commandId);
          if (!row || !fresh || fresh.status === "succeeded" || fresh.status === "failed") return;
          if (row.host_id !== hostId) return; // a job that reached the wrong host: the owner's own job runs it
          const superseded = await supersededReason(provider, cmd.kind, row);
          if (superseded) {
            await commands.failCommand(lock, commandId, superseded);
            return;
          }
          await commands.startCommand(lock, commandId);
          const exec = run[cmd.kind];
          try {
            if (!exec) throw new Error(`unknown command ${cmd.kind}`);
            const out = await exec(row, cmd.params);
            const applied = await inTransaction(db, async (tx) => {
              // compare-and-set against desired_state: a command that finished after a later one was asked for
              // (a stop overtaken by a DELETE) leaves the row as that later request set it
              const ok = out.patch ? await repo.applyCommandOutcome(tx, row.id, cmd.kind, out.patch) : true;
              await commands.succeedCommand(tx, commandId, out.result);
              return ok;
            });
            // lost follow-ups are harmless: the daily base backup and the watcher cover for them
            if (applied)
              for (const kind of out.followUps ?? []) await enqueueSystem(db, queue, row.id, kind).catch(() => {});
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            // provider refusals are final; other failures are retried by the queue, then recorded
            const final =
              isProviderError(err) &&
              [
                "bad_spec",
                "capacity",
                "bad_cidr",
                "extension_not_allowed",
                "ha_not_supported",
                "ha_not_enabled",
                "pgbouncer_missing",
                "not_found",
                "backup_not_found",
                "no_base_backup",
              ].includes(err.code);
            await commands.commandAttemptFailed(lock, commandId, message, final);
            if (CREATING.has(cmd.kind) && final)
              await inTransaction(db, (tx) =>
                repo.applyCommandOutcome(tx, row.id, cmd.kind, { state: "failed", status_reason: message }),
              );
            if (!final) throw err;
          }
        } finally {
          await sessionUnlock(lock, `database:${cmd.database_id}`).catch(() => {});
        }
      } finally {
        lock.release();
      }
    },
    onFinalFailure: async ({ commandId }, message) => {
      await inTransaction(db, async (tx) => {
        const failed = await commands.failUnlessSucceeded(tx, commandId, message);
        // a restore that gave up leaves the instance in no usable state: say so instead of "creating" forever
        if (failed && failed.kind !== "provision" && CREATING.has(failed.kind))
          await repo.applyCommandOutcome(tx, failed.database_id, failed.kind, {
            state: "failed",
            status_reason: `${failed.kind} failed: ${message}`,
          });
        const d = failed?.kind === "backup" ? await repo.findDatabaseById(tx, failed.database_id) : null;
        if (d)
          await recordEvent(tx, {
            type: "database.backup_failed",
            owner: { kind: d.owner_kind, id: d.owner_id },
            resource: { kind: "database", id: d.id },
            data: { name: d.name, reason: message },
          });
      });
    },
  });

  specs.push({
    name: "databases.reconcile",
    cron: "* * * * *",
    handler: async () => {
      await requeueLostCommands(db, queue);
      await reconcileStates(db, queue);
      await markCommandsOnUnavailableHosts(db, queue);
      for (const id of await driftedAllowlists(db, apps)) await enqueueSystem(db, queue, id, "allowlist");
    },
  });

  // a rotation's grace for the owner's app sessions is over (attachments.ts); a server that is down has none left
  specs.push({
    name: END_OLD_SESSIONS_JOB,
    perHost: true,
    retryLimit: 3,
    handler: async ({ databaseId, role, before }: { databaseId: string; role: "owner"; before: string }) => {
      const row = await repo.findDatabaseById(db, databaseId);
      if (!row || row.host_id !== hostId) return;
      await provider.endSessionsBefore(databaseId, role, new Date(before)).catch((err) => {
        if (!isProviderError(err, "not_running") && !isProviderError(err, "not_found")) throw err;
      });
    },
  });

  // the apps area sends it when an owner's app networks change (attachments.ts)
  specs.push({
    name: OWNER_NETWORKS_JOB,
    retryLimit: 3,
    handler: async ({ owner }: { owner: Owner }) => {
      for (const id of await repo.allowlistedOf(db, owner)) await enqueueSystem(db, queue, id, "allowlist");
    },
  });

  specs.push({
    name: "databases.daily-base-backup",
    cron: "0 3 * * *",
    handler: async () => {
      for (const id of await repo.runningDatabaseIds(db)) await enqueueSystem(db, queue, id, "base_backup");
    },
  });

  // each host watches the instances it holds
  specs.push({
    name: "databases.watch",
    cron: "* * * * *",
    perHost: true,
    policy: "stately",
    handler: async () => watchDatabases({ db, provider }, await databasesOnHost(db, hostId, ["running"])),
  });

  specs.push({
    name: "databases.purge-removed",
    cron: "23 * * * *",
    handler: async () => {
      for (const id of await repo.purgeDueIds(db, REMOVAL_GRACE_DAYS)) await enqueueSystem(db, queue, id, "purge");
    },
  });
  return specs;
}

export async function enqueueSystem(
  db: Queryable,
  queue: Pick<JobQueue, "send">,
  databaseId: string,
  kind: string,
): Promise<void> {
  if (await commands.hasOpenCommand(db, databaseId, kind)) return;
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
  for (const r of await commands.unfinishedCommands(db, atStartup)) {
    if (r.status === "running" && !r.stale && !(await lockIsFree(db, r.database_id))) continue;
    await sendCommand(db, queue, COMMAND_JOB, r.id, { singletonKey: `cmd:${r.id}`, resend: true });
  }
}

async function lockIsFree(db: Db, databaseId: string): Promise<boolean> {
  const c = await db.connect();
  try {
    const got = await trySessionLock(c, `database:${databaseId}`);
    if (got) await sessionUnlock(c, `database:${databaseId}`);
    return got;
  } finally {
    c.release();
  }
}

/**
 * Instances whose observed state is not their desired state, with nothing queued to get them there. desired_state
 * is the truth; every (desired_state, state) pair converges:
 *   removed  / anything but removed    → remove (server stopped, state removed; backups kept for the grace window)
 *   running or paused / creating       → provision (it stops the server again when paused is desired); a branch
 *                                        (parent_id) is made again as a copy of its parent instead
 *   running  / paused or removed       → start
 *   paused   / running or removed      → stop
 *   idle_stopped / running              → idle_stop (scale-to-zero, src/databases/idle)
 *   running or paused / failed         → left for the user (restore or delete): retrying blindly would not help
 */
async function reconcileStates(db: Db, queue: Pick<JobQueue, "send">): Promise<void> {
  for (const r of await commands.driftedDatabases(db)) {
    const kind =
      r.desired_state === "removed"
        ? "remove"
        : r.state === "creating"
          ? r.parent_id
            ? "branch"
            : "provision"
          : r.desired_state === "running"
            ? "start"
            : r.desired_state === "idle_stopped"
              ? "idle_stop"
              : "stop";
    await enqueueSystem(db, queue, r.id, kind);
  }
}

/**
 * After a restart, every server is brought to its recorded state (the reconciler also runs each minute): also
 * the servers of deleted instances, which must be stopped whatever their row says.
 */
export async function reconcileNow(
  db: Db,
  queue: Pick<JobQueue, "send" | "hostAvailable">,
  provider: DatabaseProvider,
  hostId: string,
): Promise<void> {
  for (const r of await commands.serversToCheck(db, hostId)) {
    const status = await provider.status(r.id).catch(() => null);
    if (!status) continue;
    if (r.desired_state === "removed") {
      if (status.running || !status.removed) await enqueueSystem(db, queue, r.id, "remove");
    } else if (r.state === "running" && r.desired_state === "running" && !status.running)
      await enqueueSystem(db, queue, r.id, "start");
    else if (r.state === "paused" && r.desired_state === "paused" && status.running)
      await enqueueSystem(db, queue, r.id, "stop");
    else if (r.state === "idle_stopped" && r.desired_state === "idle_stopped" && status.running)
      await enqueueSystem(db, queue, r.id, "idle_stop");
  }
  await requeueLostCommands(db, queue, true);
  await reconcileStates(db, queue);
}
