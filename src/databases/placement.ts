import type { Db, Queryable } from "../store/db.js";
import type { JobQueue, SendOptions } from "../jobs/queue.js";
import { ApiError } from "../http/errors.js";
import type { DatabaseProvider } from "./provider/types.js";
import * as repo from "./repo.js";
import * as commands from "./commands-repo.js";

export { databasesOnHost, supersedeRotations } from "./commands-repo.js";

/**
 * Databases on hosts (issue 18). Each instance records the host holding its files (`host_id`, chosen
 * by placement at creation); its commands go to that host's queue (`databases.command.<hostId>`) and
 * only that host's workers run them. A command for a host without a heartbeat stays queued with
 * `error` saying host_unavailable, and runs when the host is back; nothing moves to another host.
 */

type Jobs = Pick<JobQueue, "send"> & Partial<Pick<JobQueue, "hostAvailable">>;

export const HOST_UNAVAILABLE =
  "host_unavailable: the server holding this database is not reachable (no heartbeat); the command waits and runs when it is back";
const NOT_PLACED =
  "host_unavailable: this database is not placed on a host yet; it waits for the host holding its files to start";

/**
 * Queues a command's job on the host holding its database, saying on the command when that host is down.
 * `resend`: a repair pass re-sending a command; skipped while the host is down (its start-up re-sends
 * every queued command), so a long outage does not pile up duplicate jobs in its queue.
 */
export async function sendCommand(
  db: Queryable,
  jobs: Jobs,
  job: string,
  commandId: string,
  options: SendOptions & { resend?: boolean } = {},
): Promise<void> {
  const hostId = await commands.commandHost(db, commandId);
  if (hostId === undefined) return;
  if (!hostId) return commands.markWaiting(db, [commandId], NOT_PLACED);
  if (jobs.hostAvailable && !(await jobs.hostAvailable(hostId))) {
    await commands.markWaiting(db, [commandId], HOST_UNAVAILABLE);
    if (options.resend) return;
  }
  const { resend: _, ...send } = options;
  await jobs.send(job, { commandId }, { ...send, host: hostId });
}

/** The reconciler's pass: queued commands whose host went quiet after they were sent say so too. */
export async function markCommandsOnUnavailableHosts(db: Db, jobs: Jobs): Promise<void> {
  if (!jobs.hostAvailable) return;
  for (const r of await commands.queuedByHost(db)) {
    if (!r.host_id) await commands.markWaiting(db, r.ids, NOT_PLACED);
    else if (!(await jobs.hostAvailable(r.host_id))) await commands.markWaiting(db, r.ids, HOST_UNAVAILABLE);
  }
}

/** Refuses at once (503 host_unavailable) a change that needs the host now, before anything is recorded. */
export async function requireHost(jobs: Jobs, row: repo.DatabaseRow): Promise<void> {
  if (!row.host_id || (jobs.hostAvailable && !(await jobs.hostAvailable(row.host_id)))) {
    throw new ApiError(
      "host_unavailable",
      "The server holding this database is not reachable right now; nothing was changed. Try again shortly.",
    );
  }
}

/**
 * Waits for a command the caller's answer depends on (rotate-password, a remote reservation). When the
 * host goes quiet, or the time is up, a command still queued is withdrawn (failed), so it can never
 * apply later what the caller was told did not happen; 503 host_unavailable when the host went quiet.
 */
export async function awaitCommand(
  db: Db,
  jobs: Jobs,
  commandId: string,
  hostId: string,
  timeoutMs: number,
): Promise<repo.CommandRow | null> {
  const deadline = Date.now() + timeoutMs;
  let hostCheckedAt = Date.now();
  for (;;) {
    const c = await repo.findCommand(db, commandId);
    if (!c || c.status === "succeeded" || c.status === "failed") return c;
    let hostGone = false;
    if (jobs.hostAvailable && Date.now() - hostCheckedAt >= 1000) {
      hostCheckedAt = Date.now();
      hostGone = !(await jobs.hostAvailable(hostId));
    }
    if (hostGone) {
      const withdrawn = await commands.withdrawQueued(
        db,
        commandId,
        "host_unavailable: the server holding this database stopped answering; withdrawn",
      );
      throw new ApiError(
        "host_unavailable",
        withdrawn
          ? "The server holding this database stopped answering; nothing was changed. Try again shortly."
          : "The server holding this database stopped answering while applying the change; its commands show the outcome once it is back.",
      );
    }
    if (Date.now() > deadline) {
      const reason = "withdrawn: not run in time";
      return (await commands.withdrawQueued(db, commandId, reason)) ? { ...c, status: "failed", error: reason } : c;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Instances created before hosts existed (host_id NULL) belong to the worker host whose DATA_DIR holds
 * their files; each such host adopts its own at start-up. Nothing is ever moved from one host to another.
 */
export async function adoptUnplaced(db: Db, provider: DatabaseProvider, hostId: string): Promise<string[]> {
  const adopted: string[] = [];
  for (const id of await commands.unplacedDatabaseIds(db)) {
    const here = await provider.status(id).then(
      () => true,
      () => false,
    );
    if (!here) continue;
    if (await commands.placeUnplaced(db, id, hostId)) adopted.push(id);
  }
  return adopted;
}

/**
 * Status only the holding host's provider can report (pooler, standby). On that host it is read live;
 * through a process of another host it is what the last command that changed it recorded (its result).
 */
export async function statusOnHost<T>(
  db: Queryable,
  localHostId: string,
  row: repo.DatabaseRow,
  live: () => Promise<T>,
  kinds: string[],
): Promise<T | null> {
  if (row.host_id === localHostId) return live().catch(() => null);
  return commands.lastCommandResult<T>(db, row.id, kinds);
}
