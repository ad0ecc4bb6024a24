import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

export interface VolumeRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  name: string;
  size_gb: number;
  host_id: string | null;
  state: "creating" | "ready" | "removed" | "failed";
  state_reason: string | null;
  created_at: Date;
  removed_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The owner's live volume by id or name. */
export async function findVolume(
  q: Queryable,
  owner: Owner,
  ref: string,
  opts: { forUpdate?: boolean } = {},
): Promise<VolumeRow | null> {
  const { rows } = await q.query<VolumeRow>(
    `SELECT * FROM volumes WHERE owner_kind = $1 AND owner_id = $2 AND ${UUID.test(ref) ? "id = $3::uuid" : "name = $3"}
        AND state <> 'removed' ${opts.forUpdate ? "FOR UPDATE" : ""}`,
    [owner.kind, owner.id, ref],
  );
  return rows[0] ?? null;
}

/** Live pods (not removed) that mount the volume, other than `exceptPod`. */
export async function podsUsingVolume(q: Queryable, volumeId: string, exceptPod: string | null): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM pods WHERE volumes @> $1::jsonb AND desired_state <> 'removed' AND ($2::uuid IS NULL OR id <> $2)`,
    [JSON.stringify([{ volume_id: volumeId }]), exceptPod],
  );
  return rows.map((r) => r.id);
}
