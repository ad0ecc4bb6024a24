import type { Db, Queryable } from "../store/db.js";
import type { JobQueue, SendOptions } from "../jobs/queue.js";
import { ApiError } from "../http/errors.js";
import type { DatabaseProvider } from "./provider/types.js";
import * as repo from "./repo.js";

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
  const { rows } = await db.query<{ host_id: string | null }>(
    "SELECT d.host_id FROM database_commands c JOIN databases d ON d.id = c.database_id WHERE c.id = $1",
    [commandId],
  );
  if (!rows[0]) return;
  const hostId = rows[0].host_id;
  if (!hostId) return markWaiting(db, [commandId], NOT_PLACED);
  if (jobs.hostAvailable && !(await jobs.hostAvailable(hostId))) {
    await markWaiting(db, [commandId], HOST_UNAVAILABLE);
    if (options.resend) return;
  }
  const { resend: _, ...send } = options;
  await jobs.send(job, { commandId }, { ...send, host: hostId });
}

async function markWaiting(db: Queryable, ids: string[], reason: string): Promise<void> {
  await db.query(
    "UPDATE database_commands SET error = $2 WHERE id = ANY($1) AND status = 'queued' AND error IS DISTINCT FROM $2",
    [ids, reason],
  );
}

/** The reconciler's pass: queued commands whose host went quiet after they were sent say so too. */
export async function markCommandsOnUnavailableHosts(db: Db, jobs: Jobs): Promise<void> {
  if (!jobs.hostAvailable) return;
  const { rows } = await db.query<{ host_id: string | null; ids: string[] }>(
    `SELECT d.host_id, array_agg(c.id::text) AS ids FROM database_commands c JOIN databases d ON d.id = c.database_id
      WHERE c.status = 'queued' GROUP BY d.host_id`,
  );
  for (const r of rows) {
    if (!r.host_id) await markWaiting(db, r.ids, NOT_PLACED);
    else if (!(await jobs.hostAvailable(r.host_id))) await markWaiting(db, r.ids, HOST_UNAVAILABLE);
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
      const withdrawn = await withdraw(
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
      return (await withdraw(db, commandId, reason)) ? { ...c, status: "failed", error: reason } : c;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function withdraw(db: Queryable, commandId: string, reason: string): Promise<boolean> {
  const res = await db.query(
    "UPDATE database_commands SET status = 'failed', error = $2, finished_at = now(), params = params - 'password' WHERE id = $1 AND status = 'queued'",
    [commandId, reason],
  );
  return (res.rowCount ?? 0) > 0;
}

/** A new rotation supersedes queued ones: only the newest password is ever applied last (e.g. one whose request a crash cut). */
export async function supersedeRotations(db: Queryable, databaseId: string): Promise<void> {
  await db.query(
    `UPDATE database_commands SET status = 'failed', error = 'superseded by a newer password rotation', finished_at = now(), params = params - 'password'
      WHERE database_id = $1 AND kind = 'rotate_password' AND status = 'queued'`,
    [databaseId],
  );
}

/**
 * Instances created before hosts existed (host_id NULL) belong to the worker host whose DATA_DIR holds
 * their files; each such host adopts its own at start-up. Nothing is ever moved from one host to another.
 */
export async function adoptUnplaced(db: Db, provider: DatabaseProvider, hostId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM databases WHERE host_id IS NULL AND purged_at IS NULL",
  );
  const adopted: string[] = [];
  for (const r of rows) {
    const here = await provider.status(r.id).then(
      () => true,
      () => false,
    );
    if (!here) continue;
    const res = await db.query("UPDATE databases SET host_id = $2 WHERE id = $1 AND host_id IS NULL", [r.id, hostId]);
    if (res.rowCount) adopted.push(r.id);
  }
  return adopted;
}

/** The instances this host holds, for work that goes over all of them (the watcher, the start-up check). */
export async function databasesOnHost(db: Queryable, hostId: string, states: string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT id FROM databases WHERE host_id = $1 AND state = ANY($2) AND purged_at IS NULL",
    [hostId, states],
  );
  return rows.map((r) => r.id);
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
  const { rows } = await db.query<{ result: T }>(
    `SELECT result FROM database_commands WHERE database_id = $1 AND kind = ANY($2) AND status = 'succeeded' AND result IS NOT NULL
      ORDER BY finished_at DESC LIMIT 1`,
    [row.id, kinds],
  );
  return rows[0]?.result ?? null;
}
