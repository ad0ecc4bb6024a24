import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { inTransaction, type Db } from "../../store/db.js";
import { ApiError, asApiError } from "../../http/errors.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { JobSpec } from "../../kernel/area.js";
import type { JobQueue } from "../../jobs/queue.js";
import { recordEvent } from "../../events/public.js";
import { insertCommand } from "../repo.js";
import { sendCommand } from "../placement.js";
import { COMMAND_JOB } from "../service-core.js";
import type { WakeCapable, WakeOutcome } from "../provider/wake.js";
import * as idle from "./repo.js";

export const IDLE_SWEEP_JOB = "databases.idle-sweep";

export interface DatabaseIdleDeps {
  db: Db;
  jobs: Pick<JobQueue, "send" | "hostAvailable">;
  kernel: Pick<Kernel, "admit">;
  provider: WakeCapable;
  hostId: string;
  /** DB_WAKE_TIMEOUT_MS: how long a connection waits for the start it caused */
  wakeTimeoutMs: number;
  log: FastifyBaseLogger;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Scale-to-zero for dev databases (issue 30), as src/apps/idle does for pods: the sweep of each host stops its
 * instances that had no client connection for their idle_stop_seconds (desired and observed state `idle_stopped`,
 * metered as paused: storage only), and `wake` starts one again for a connection its wake front holds, admitted
 * like a start. Both decide in one transaction on the instance's row, so any number of processes agree: one start.
 */
export function databaseIdleService(deps: DatabaseIdleDeps) {
  const { db, jobs, provider, hostId, log } = deps;

  /** Stops what has been idle long enough on this host; returns the ids stopped. */
  async function sweep(): Promise<string[]> {
    const stopped: string[] = [];
    for (const c of await idle.idleCandidatesOnHost(db, hostId)) {
      const sessions = await provider.clientSessions(c.id).catch((err: Error) => {
        log.warn({ database: c.id, err: err.message }, "idle sweep: sessions not counted; left running");
        return null;
      });
      if (sessions === null) continue;
      if (sessions > 0) {
        await idle.markActive(db, c.id);
        continue;
      }
      const commandId = randomUUID();
      const done = await inTransaction(db, async (tx) => {
        const row = await idle.markIdleStopped(tx, c.id);
        if (!row) return false; // not idle long enough yet, or changed meanwhile
        await insertCommand(tx, { id: commandId, databaseId: c.id, kind: "idle_stop", params: {} });
        await recordEvent(tx, {
          type: "database.scaled_to_zero",
          owner: { kind: row.owner_kind, id: row.owner_id },
          resource: { kind: "database", id: c.id },
          data: {
            name: row.name,
            idle_stop_seconds: c.idle_stop_seconds,
            last_connection_seen_at: row.last_active_at?.toISOString() ?? null,
          },
        });
        return true;
      });
      if (!done) continue;
      stopped.push(c.id);
      log.info({ database: c.id, idle_stop_seconds: c.idle_stop_seconds }, "database stopped while idle");
      await sendCommand(db, jobs, COMMAND_JOB, commandId).catch(() => {}); // the reconciler re-sends a lost one
    }
    return stopped;
  }

  /**
   * A connection arrived for an idle-stopped instance: records the start (once, under the row's lock; admitted like
   * a start), then waits until it runs. A refusal or a failed start is the message the connection is closed with.
   */
  async function wake(id: string): Promise<WakeOutcome> {
    let since: Date;
    let commandId: string | null;
    try {
      ({ since, commandId } = await inTransaction(db, async (tx) => {
        const row = await idle.lockForWake(tx, id);
        const now = await idle.storeNow(tx);
        if (!row || row.desired_state === "removed") throw new ApiError("not_found", "The database was deleted.");
        // woken already by another connection or process, or started by its owner: wait for that start
        if (row.desired_state === "running") return { since: new Date(now.getTime() - 60_000), commandId: null };
        if (row.desired_state !== "idle_stopped")
          throw new ApiError(
            "not_running",
            `The database is ${row.state}; start it with POST /v1/databases/{id}/start.`,
          );
        await deps.kernel.admit(tx, {
          owner: { kind: row.owner_kind, id: row.owner_id },
          accountId: row.account_id,
          kind: "database",
          size: row.size,
          storageGb: row.storage_gb,
          update: true,
          starts: 1,
        });
        await idle.markWoken(tx, id);
        const cid = randomUUID();
        await insertCommand(tx, { id: cid, databaseId: id, kind: "start", params: { reason: "wake" } });
        await recordEvent(tx, {
          type: "database.woken",
          owner: { kind: row.owner_kind, id: row.owner_id },
          resource: { kind: "database", id },
          data: { name: row.name },
        });
        return { since: now, commandId: cid };
      }));
    } catch (err) {
      const api = asApiError(err);
      if (!api) throw err;
      log.info({ database: id, code: api.code }, "database wake refused");
      return { ok: false, message: `the database cannot be started: ${api.message}` };
    }
    if (commandId) {
      log.info({ database: id }, "database woken by a connection");
      await sendCommand(db, jobs, COMMAND_JOB, commandId).catch(() => {});
    }
    return waitRunning(id, since);
  }

  async function waitRunning(id: string, since: Date): Promise<WakeOutcome> {
    const deadline = Date.now() + deps.wakeTimeoutMs;
    for (;;) {
      const p = await idle.wakeProgress(db, id, since);
      if (!p) return { ok: false, message: "the database was deleted" };
      if (p.state === "running" && p.desired_state === "running") return { ok: true };
      if (p.desired_state !== "running") return { ok: false, message: `the database was ${p.desired_state} meanwhile` };
      // an attempt that failed is retried by the queue; this connection is answered now, the next one waits for it
      if (p.start_status === "failed" || p.state === "failed" || (p.start_status === "queued" && p.start_error))
        return { ok: false, message: `the database could not be started: ${p.start_error ?? p.status_reason}` };
      // the start runs in another process of this host: its server needs the ports this one may hold
      if (p.start_status === "running") await provider.releaseWakeFront(id);
      if (Date.now() > deadline) return { ok: false, message: "the database did not start in time; try again" };
      await sleep(50);
    }
  }

  /**
   * Every worker process of the host keeps the fronts in step with the store: it listens for each idle-stopped
   * instance whose ports are free (one process wins each port; another takes over when it dies) and gives up the
   * ports of those that are no longer idle-stopped (started by their owner through another process).
   */
  async function syncFronts(): Promise<void> {
    const want = new Set(await idle.idleStoppedOnHost(db, hostId));
    for (const id of provider.heldWakeFronts()) if (!want.has(id)) await provider.releaseWakeFront(id);
    const held = new Set(provider.heldWakeFronts());
    for (const id of want) if (!held.has(id)) await provider.holdForWake(id).catch(() => false);
  }

  let timer: NodeJS.Timeout | null = null;
  /** starts answering connections: the wake handler, and the front sync every `ms` */
  const every = (ms: number) => {
    provider.setWakeHandler(wake);
    const tick = () => void syncFronts().catch((err) => log.warn({ err }, "wake fronts: sync failed; retried"));
    tick();
    timer = setInterval(tick, ms);
    timer.unref();
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
    provider.setWakeHandler(null);
  };

  return { sweep, wake, syncFronts, every, stop };
}

export type DatabaseIdleService = ReturnType<typeof databaseIdleService>;

/** Every minute on each host (its instances' sessions are read there): stops what has been idle long enough. */
export function databaseIdleJobs(sweep: () => Promise<unknown>): JobSpec[] {
  return [
    {
      name: IDLE_SWEEP_JOB,
      cron: "* * * * *",
      perHost: true,
      policy: "stately",
      handler: async () => void (await sweep()),
    },
  ];
}
