import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { ApiError } from "../../http/errors.js";
import { findVolume, podsUsingVolume, volumeStates } from "./repo.js";

/** A volume named in a pod spec: by id or name, mounted at an absolute path. */
export interface VolumeRef {
  volume: string;
  path: string;
}

/**
 * Checks a pod's volumes: each is the owner's, ready or still being created, mounted by no other live pod (one
 * writer, as a disk is), at a distinct absolute path. The pod goes where its volumes are (they are files on one
 * host). A volume still `creating` does not refuse the pod (scripts need not poll): the pod is accepted
 * `pending` with `waiting`, and the reconciler starts it once the volume is ready (Kubernetes does the same
 * with an unbound claim).
 */
export async function checkVolumes(
  q: Queryable,
  owner: Owner,
  refs: VolumeRef[],
  podId: string | null,
): Promise<{ refs: { volume_id: string; path: string }[]; hostId: string | null; waiting: string | null }> {
  const out: { volume_id: string; path: string }[] = [];
  let waiting: string | null = null;
  let hostId: string | null = null;
  for (const ref of refs) {
    if (!/^\/[A-Za-z0-9._\-/]*$/.test(ref.path) || ref.path === "/" || ref.path.includes(".."))
      throw new ApiError("invalid_request", `Volume path "${ref.path}" must be an absolute path other than /.`);
    if (out.some((o) => o.path === ref.path))
      throw new ApiError("invalid_request", `Two volumes are mounted at ${ref.path}.`);
    const v = await findVolume(q, owner, ref.volume, { forUpdate: true });
    if (!v) throw new ApiError("not_found", `No volume "${ref.volume}" for this account.`);
    if (v.state === "creating") waiting ??= `waiting for volume ${v.name}`;
    else if (v.state !== "ready")
      throw new ApiError("conflict", `Volume ${v.name} is ${v.state}${v.state_reason ? ` (${v.state_reason})` : ""}.`);
    const users = await podsUsingVolume(q, v.id, podId);
    if (users.length) throw new ApiError("volume_in_use", `Volume ${v.name} is mounted by pod ${users[0]}.`);
    if (hostId && v.host_id && v.host_id !== hostId)
      throw new ApiError("invalid_request", "The volumes are on different hosts; a pod can mount volumes of one host.");
    hostId = v.host_id ?? hostId;
    if (out.some((o) => o.volume_id === v.id))
      throw new ApiError("invalid_request", `Volume ${v.name} is named twice.`);
    out.push({ volume_id: v.id, path: ref.path });
  }
  return { refs: out, hostId, waiting };
}

/**
 * What holds a pod's start back: a volume still being created (`pending`, the pod waits) or one that failed
 * or was removed (`failed`, with the volume's reason). Both null: every volume is ready.
 */
export async function volumesBlocking(
  q: Queryable,
  refs: { volume_id: string }[],
): Promise<{ pending: string | null; failed: string | null }> {
  if (!refs.length) return { pending: null, failed: null };
  const rows = await volumeStates(
    q,
    refs.map((r) => r.volume_id),
  );
  const bad = rows.find((v) => v.state === "failed" || v.state === "removed");
  const missing = refs.length > rows.length;
  const failed = bad
    ? `volume ${bad.name} ${bad.state === "failed" ? "failed" : "was removed"}${bad.state_reason ? `: ${bad.state_reason}` : ""}`
    : missing
      ? "a volume of this pod no longer exists"
      : null;
  const creating = rows.find((v) => v.state === "creating");
  return { pending: creating ? `waiting for volume ${creating.name}` : null, failed };
}
