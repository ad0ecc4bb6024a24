import { randomUUID } from "node:crypto";
import { ownerColumnsOf } from "../../kernel/owner.js";
import { isUniqueViolation, type Db } from "../../store/db.js";
import { ApiError, found, notFound } from "../../http/errors.js";
import type { InstanceFilter, Principal } from "../../auth/principal.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { VolumeStore } from "../../runtime/volumes.js";
import { auditedTransaction } from "../../audit/record.js";
import * as repo from "./repo.js";
import { VOLUME_JOB } from "./jobs.js";
import { VOLUME_KIND, VOLUME_SIZE } from "./metering.js";

export interface VolumesDeps {
  db: Db;
  kernel: Pick<Kernel, "admit" | "require">;
  jobs: Pick<JobQueue, "send">;
  store: VolumeStore;
}

/**
 * Volumes: a fixed-size file system on one host. Creation is admitted (storage is paid per GB-hour) and
 * placed, then the host's worker makes the file system (`apps.volume`); a pod mounting it goes to its host.
 */
export function volumesService(deps: VolumesDeps) {
  const { db, kernel, jobs } = deps;

  const kick = (v: repo.VolumeRow) =>
    v.host_id ? jobs.send(VOLUME_JOB, { volumeId: v.id }, { host: v.host_id }).catch(() => null) : null;

  async function create(p: Principal, input: { name: string; size_gb: number }): Promise<repo.VolumeWithPod> {
    const id = randomUUID();
    let row: repo.VolumeWithPod;
    try {
      row = await auditedTransaction(db, p, async (tx) => {
        await kernel.admit(tx, {
          owner: p.owner,
          accountId: p.accountId,
          kind: VOLUME_KIND,
          size: VOLUME_SIZE,
          storageGb: input.size_gb,
        });
        const hostId = await kernel.require("hosts").place(tx, { kind: "volume", owner: p.owner });
        // this host cannot make volumes (not root, no mkfs.ext4): 503 with how to fix it, nothing recorded
        const missing = hostId === kernel.require("hosts").local.id ? await deps.store.unavailable() : null;
        if (missing) throw new ApiError("runtime_unavailable", `Volumes cannot be created here: ${missing}.`);
        await repo.insertVolume(tx, {
          id,
          ...ownerColumnsOf(p),
          name: input.name,
          size_gb: input.size_gb,
          host_id: hostId,
        });
        return (await repo.volumeWithPod(tx, id))!;
      });
    } catch (err) {
      if (isUniqueViolation(err, "volumes_name_live"))
        throw new ApiError("slug_taken", `A volume named "${input.name}" exists already.`);
      throw err;
    }
    await kick(row);
    return row;
  }

  const list = (p: Principal, filter: InstanceFilter) => repo.listVolumes(db, p.owner, filter);

  async function get(p: Principal, ref: string): Promise<repo.VolumeWithPod> {
    const v = await repo.findVolume(db, p.owner, ref);
    const row = v && (await repo.volumeWithPod(db, v.id));
    if (!row) throw notFound("volume");
    return row;
  }

  /** refused while a live pod mounts it; the host's worker deletes the files once its containers are gone */
  async function remove(p: Principal, ref: string): Promise<repo.VolumeWithPod> {
    const row = await auditedTransaction(db, p, async (tx) => {
      const v = found(await repo.findVolume(tx, p.owner, ref, { forUpdate: true }), "volume");
      const users = await repo.podsUsingVolume(tx, v.id, null);
      if (users.length)
        throw new ApiError("volume_in_use", `Volume ${v.name} is mounted by pod ${users[0]}; delete the pod first.`);
      await repo.markRemoved(tx, v.id);
      return (await repo.volumeWithPod(tx, v.id))!;
    });
    await kick(row);
    return row;
  }

  /** bytes in use, when the volume is ready on this host (another host's volume is measured there) */
  async function usedBytes(v: repo.VolumeRow): Promise<number | null> {
    if (v.state !== "ready" || v.host_id !== kernel.require("hosts").local.id) return null;
    const u = await deps.store.usage(v.id).catch(() => null);
    return u?.usedBytes ?? null;
  }

  return { create, list, get, remove, usedBytes };
}

export type VolumesService = ReturnType<typeof volumesService>;
