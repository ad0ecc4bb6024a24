import type { FastifyBaseLogger } from "fastify";
import type { JobSpec } from "../../kernel/area.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Db } from "../../store/db.js";
import type { VolumeStore } from "../../runtime/volumes.js";
import { creatingOnHost, finishCreate, podsHoldingVolume, podsUsingVolume, volumeById } from "./repo.js";
import { sendReconcile } from "../service.js";
import { sessionLock, sessionUnlock } from "../../store/locks.js";

/** Creates or removes one volume's file system on its host; the row says which. */
export const VOLUME_JOB = "apps.volume";

export interface VolumeJobDeps {
  db: Db;
  store: VolumeStore;
  hostId: string;
  log: FastifyBaseLogger;
  /** pods waiting for a volume (pending) are reconciled as soon as it is ready or failed, not at the next sweep */
  jobs?: Pick<JobQueue, "send">;
}

const MB_PER_GB = 1024;

/**
 * Drives one volume's files to its row: `creating` makes the fixed-size file system and marks it ready (or
 * failed with the reason), `removed` deletes it once no container of a pod naming it is left (a pod being
 * deleted may still be stopping: the job fails and pg-boss retries it). One run per volume at a time (an
 * advisory lock), so a delete arriving mid-creation waits for it and then removes what it made.
 */
export async function applyVolume(deps: VolumeJobDeps, volumeId: string): Promise<void> {
  const lock = await deps.db.connect();
  try {
    await sessionLock(lock, `volume:${volumeId}`);
    try {
      await step(deps, volumeId);
    } finally {
      await sessionUnlock(lock, `volume:${volumeId}`);
    }
  } finally {
    lock.release();
  }
}

async function step(deps: VolumeJobDeps, volumeId: string): Promise<void> {
  const v = await volumeById(deps.db, volumeId);
  if (!v || v.host_id !== deps.hostId) return;
  if (v.state === "creating") {
    try {
      await deps.store.create(v.id, v.size_gb * MB_PER_GB);
    } catch (err) {
      deps.log.warn({ err, volume: v.id }, "volume could not be created");
      await deps.store.remove(v.id).catch(() => {});
      await finishCreate(deps.db, v.id, { state: "failed", reason: (err as Error).message.slice(0, 500) });
      await wakePods(deps, v.id);
      return;
    }
    await finishCreate(deps.db, v.id, { state: "ready" }); // a delete meanwhile sent its own job: it removes
    await wakePods(deps, v.id);
    return;
  }
  if (v.state === "removed") {
    const holders = await podsHoldingVolume(deps.db, v.id);
    if (holders.length) throw new Error(`volume ${v.id} is still mounted by pod ${holders[0]}, which is stopping`);
    await deps.store.remove(v.id);
  }
}

async function wakePods(deps: VolumeJobDeps, volumeId: string) {
  if (!deps.jobs) return;
  for (const podId of await podsUsingVolume(deps.db, volumeId, null))
    await sendReconcile(deps.jobs, podId, deps.hostId);
}

export function volumeJobs(deps: VolumeJobDeps): JobSpec<any>[] {
  return [
    {
      name: VOLUME_JOB,
      perHost: true, // a volume is files on its host: only that host's workers make or remove them
      concurrency: 2,
      retryLimit: 6,
      expireInSeconds: 900,
      handler: async (data: { volumeId: string }) => applyVolume(deps, data.volumeId),
    },
  ];
}

/** At start: volumes of this host still `creating` (the process died, or a send was lost) get their job again. */
export async function resumeVolumes(db: Db, jobs: Pick<JobQueue, "send">, hostId: string): Promise<void> {
  for (const id of await creatingOnHost(db, hostId))
    await jobs.send(VOLUME_JOB, { volumeId: id }, { host: hostId }).catch(() => null);
}
