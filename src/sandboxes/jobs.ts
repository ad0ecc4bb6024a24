import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { JobSpec } from "../kernel/contracts.js";
import type { RuntimeProvider } from "../runtime/index.js";
import * as repo from "./repo.js";
import { destroy, EXPIRE_JOB, REAP_JOB, sandboxLabels } from "./service.js";
import { everyMinute } from "../kernel/periodic.js";

export interface ReapDeps {
  db: Db;
  runtime: RuntimeProvider;
  hostId: string;
  log: FastifyBaseLogger;
}

/** A running sandbox whose container vanished this long before its time is counted as lost, not as about to expire. */
const SLACK_MS = 5_000;

/**
 * Brings one host's sandbox containers in line with the store:
 * - a running sandbox past its time: its container goes (if the runtime has not removed it already),
 *   the row becomes `expired`;
 * - a container whose sandbox is not running any more (deleted, expired, unknown): removed;
 * - a running sandbox whose container is gone well before its time (host restart) or was never made
 *   (the creating process died): `expired`, with the reason.
 * Safe to run concurrently and repeatedly: every step is idempotent.
 */
export async function reap(deps: ReapDeps): Promise<{ expired: string[]; removed: string[] }> {
  const { db, runtime, hostId } = deps;
  const expired: string[] = [];
  const removed: string[] = [];
  if (await runtime.unavailable()) return { expired, removed };

  for (const row of await repo.dueOnHost(db, hostId)) {
    await destroy(runtime, row);
    await repo.markExpired(db, row.id, `timed out after ${row.timeout_s} s`);
    expired.push(row.id);
  }

  // read before the containers are listed: a sandbox started by then has its container in the list
  const running = await repo.runningOnHost(db, hostId);
  const containers = await runtime.list(sandboxLabels(hostId));
  const rows = await repo.sandboxesByIds(
    db,
    containers.map((c) => c.labels["platform.sandbox"] ?? ""),
  );
  const now = Date.now();
  for (const c of containers) {
    const row = rows.get(c.labels["platform.sandbox"] ?? "");
    if (row && row.state === "running" && row.expires_at.getTime() > now) continue;
    await runtime.remove(c.name);
    removed.push(c.name);
  }

  const alive = new Set(containers.filter((c) => c.status === "running").map((c) => c.labels["platform.sandbox"]));
  for (const row of running) {
    if (alive.has(row.id) || row.expires_at.getTime() <= now + SLACK_MS) continue;
    // still being created by a live process: its container appears within the creation's own time bound
    if (!row.started_at && now - row.created_at.getTime() < 15 * 60_000) continue;
    await destroy(runtime, row);
    await repo.markExpired(
      db,
      row.id,
      row.started_at
        ? "its container stopped before the sandbox's timeout (host restart?)"
        : "its creation did not finish (the platform stopped while creating it)",
    );
    expired.push(row.id);
  }
  if (expired.length || removed.length) deps.log.info({ expired, removed }, "sandboxes reaped");
  return { expired, removed };
}

/** The reaper: every minute on each worker host, and right after a sandbox's time (queued at its creation). */
export function sandboxJobs(deps: ReapDeps): JobSpec[] {
  return [
    everyMinute(REAP_JOB, () => reap(deps), { expireInSeconds: 300, perHost: true }),
    {
      name: EXPIRE_JOB,
      perHost: true,
      retryLimit: 2,
      expireInSeconds: 300,
      handler: async () => {
        await reap(deps);
      },
    },
  ];
}
