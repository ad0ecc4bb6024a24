import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { ApiError } from "../../http/errors.js";
import { findVolume, podsUsingVolume } from "./repo.js";

/** A volume named in a pod spec: by id or name, mounted at an absolute path. */
export interface VolumeRef {
  volume: string;
  path: string;
}

/**
 * Checks a pod's volumes: each is the owner's, ready, mounted by no other live pod (one writer, as a disk
 * is), at a distinct absolute path. The pod goes where its volumes are (they are files on one host).
 */
export async function checkVolumes(
  q: Queryable,
  owner: Owner,
  refs: VolumeRef[],
  podId: string | null,
): Promise<{ refs: { volume_id: string; path: string }[]; hostId: string | null }> {
  const out: { volume_id: string; path: string }[] = [];
  let hostId: string | null = null;
  for (const ref of refs) {
    if (!/^\/[A-Za-z0-9._\-/]*$/.test(ref.path) || ref.path === "/" || ref.path.includes(".."))
      throw new ApiError("invalid_request", `Volume path "${ref.path}" must be an absolute path other than /.`);
    if (out.some((o) => o.path === ref.path))
      throw new ApiError("invalid_request", `Two volumes are mounted at ${ref.path}.`);
    const v = await findVolume(q, owner, ref.volume, { forUpdate: true });
    if (!v) throw new ApiError("not_found", `No volume "${ref.volume}" for this account.`);
    if (v.state !== "ready") throw new ApiError("conflict", `Volume ${v.name} is ${v.state}, not ready.`);
    const users = await podsUsingVolume(q, v.id, podId);
    if (users.length) throw new ApiError("volume_in_use", `Volume ${v.name} is mounted by pod ${users[0]}.`);
    if (hostId && v.host_id && v.host_id !== hostId)
      throw new ApiError("invalid_request", "The volumes are on different hosts; a pod can mount volumes of one host.");
    hostId = v.host_id ?? hostId;
    if (out.some((o) => o.volume_id === v.id))
      throw new ApiError("invalid_request", `Volume ${v.name} is named twice.`);
    out.push({ volume_id: v.id, path: ref.path });
  }
  return { refs: out, hostId };
}
