import { allRows, oneRow, type Queryable, returnedIds } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import type { MeteredTable } from "../../kernel/metered-repo.js";
import { finderOf } from "../../store/find.js";

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

/** The owner's live volume by id or name. */
export const findVolume = finderOf<VolumeRow>({ table: "volumes", refColumn: "name", where: "state <> 'removed'" });

/** Live pods (not removed) that mount the volume, other than `exceptPod`. */
export async function podsUsingVolume(q: Queryable, volumeId: string, exceptPod: string | null): Promise<string[]> {
  return returnedIds(
    q,
    `SELECT id FROM pods WHERE volumes @> $1::jsonb AND desired_state <> 'removed' AND ($2::uuid IS NULL OR id <> $2)`,
    [JSON.stringify([{ volume_id: volumeId }]), exceptPod],
  );
}

/** The volume's row with the live pod mounting it (at most one: attach.ts), for the public view. */
export type VolumeWithPod = VolumeRow & { attached_to: string | null };

const WITH_POD = `SELECT v.*, (SELECT p.id FROM pods p WHERE p.volumes @> jsonb_build_array(jsonb_build_object('volume_id', v.id::text))
    AND p.desired_state <> 'removed' ORDER BY p.created_at LIMIT 1) AS attached_to FROM volumes v`;

export async function insertVolume(
  q: Queryable,
  row: Pick<VolumeRow, "id" | "owner_kind" | "owner_id" | "account_id" | "name" | "size_gb" | "host_id">,
): Promise<void> {
  await q.query(
    `INSERT INTO volumes (id, owner_kind, owner_id, account_id, name, size_gb, host_id, state)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'creating')`,
    [row.id, row.owner_kind, row.owner_id, row.account_id, row.name, row.size_gb, row.host_id],
  );
}

export async function volumeWithPod(q: Queryable, id: string): Promise<VolumeWithPod | null> {
  return oneRow<VolumeWithPod>(q, `${WITH_POD} WHERE v.id = $1`, [id]);
}

/** The state of each of these volumes that still has a row. */
export async function volumeStates(
  q: Queryable,
  ids: string[],
): Promise<{ id: string; name: string; state: string; state_reason: string | null }[]> {
  return allRows<{ id: string; name: string; state: string; state_reason: string | null }>(
    q,
    "SELECT id, name, state, state_reason FROM volumes WHERE id = ANY($1::uuid[])",
    [ids],
  );
}

export async function volumeById(q: Queryable, id: string): Promise<VolumeRow | null> {
  return oneRow<VolumeRow>(q, "SELECT * FROM volumes WHERE id = $1", [id]);
}

/** The owner's live volumes, oldest first; `refs` narrows them to an instance-limited key's ids and names. */
export async function listVolumes(q: Queryable, owner: Owner, refs: string[] | null): Promise<VolumeWithPod[]> {
  return allRows<VolumeWithPod>(
    q,
    `${WITH_POD} WHERE v.owner_kind = $1 AND v.owner_id = $2 AND v.state <> 'removed'
        AND ($3::text[] IS NULL OR v.id::text = ANY($3) OR v.name = ANY($3))
      ORDER BY v.created_at`,
    [owner.kind, owner.id, refs],
  );
}

/** The host's worker finished (or failed) creating the file system; false when the row left `creating` meanwhile. */
export async function finishCreate(
  q: Queryable,
  id: string,
  outcome: { state: "ready" } | { state: "failed"; reason: string },
): Promise<boolean> {
  const { rowCount } = await q.query(
    "UPDATE volumes SET state = $2, state_reason = $3 WHERE id = $1 AND state = 'creating'",
    [id, outcome.state, outcome.state === "failed" ? outcome.reason : null],
  );
  return rowCount === 1;
}

export async function markRemoved(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE volumes SET state = 'removed', state_reason = NULL, removed_at = now() WHERE id = $1", [id]);
}

/** Pods whose containers may still hold the volume mounted: any pod naming it whose containers are not gone yet. */
export async function podsHoldingVolume(q: Queryable, volumeId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM pods WHERE volumes @> $1::jsonb AND state <> 'removed'",
    [JSON.stringify([{ volume_id: volumeId }])],
  );
  return rows.map((r) => r.id);
}

/** Volumes of the host still waiting for their file system (a lost job is sent again at start). */
export async function creatingOnHost(q: Queryable, hostId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>("SELECT id FROM volumes WHERE host_id = $1 AND state = 'creating'", [
    hostId,
  ]);
  return rows.map((r) => r.id);
}

/** Billing: a volume holds its storage from creation until it is removed (a failed one holds none). */
export interface BillableVolume {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  size_gb: number;
}

/** volumes meter while they exist, attached or not: their size in GB */
export const BILLABLE_VOLUMES: MeteredTable = {
  table: "volumes",
  columns: "id, owner_kind, owner_id, account_id, size_gb",
  billable: "state IN ('creating', 'ready')",
};

export async function volumeNames(q: Queryable, ids: string[]): Promise<Map<string, { name: string; slug: string }>> {
  const { rows } = await q.query<{ id: string; name: string }>(
    "SELECT id, name FROM volumes WHERE id = ANY($1::uuid[])",
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { name: r.name, slug: r.name }]));
}
