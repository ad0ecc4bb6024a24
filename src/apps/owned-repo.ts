/**
 * The apps area's SQL for organizations (owned.ts): listing, finding and moving pods, pod groups and volumes
 * between owners. A move rewrites owner_kind, owner_id and account_id of the rows and of what belongs to them (a
 * group's member pods, a pod's volumes) and announces the pods' routes (NOTIFY pod_routes: the edge caches the
 * owner of what it serves). Containers are not touched: only rows change.
 */
import { allRows, isUniqueViolation, isUuid, oneRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { moveOwned, notifyEach, type MoveTo, type OwnedTable } from "../kernel/owned-repo.js";
import { ApiError } from "../http/errors.js";
import type { GroupRow } from "./groups/repo.js";

const POD = "id::text, name, slug, owner_kind, owner_id::text, account_id::text, state, created_at";
const VOLUME = "id::text, name, NULL AS slug, owner_kind, owner_id::text, account_id::text, state, created_at";
/** a pod's mounts name volumes as {"volume_id": "<uuid>"} (volumes/attach.ts) */
const MOUNTS = "p.volumes @> jsonb_build_array(jsonb_build_object('volume_id', v.id::text))";

const byRef = (ref: string) => (isUuid(ref) ? "id = $1::uuid" : "slug = $1");

/** Live pods that are not members of a group (a group's members are the group's). */
export const OWNED_PODS: OwnedTable = {
  kind: "pod",
  table: "pods",
  columns: POD,
  live: "desired_state <> 'removed' AND group_id IS NULL",
  refColumn: "slug",
};

/** Volumes are found by id only: their names are unique per owner, not platform-wide. */
export const OWNED_VOLUMES: OwnedTable = {
  kind: "volume",
  table: "volumes",
  columns: VOLUME,
  live: "state <> 'removed'",
  refColumn: null,
};

export async function ownedGroups(q: Queryable, owner: Owner): Promise<GroupRow[]> {
  return allRows<GroupRow>(
    q,
    `SELECT * FROM pod_groups WHERE owner_kind = $1 AND owner_id = $2 AND desired_state <> 'removed'
      ORDER BY created_at, id`,
    [owner.kind, owner.id],
  );
}

export async function groupByRef(q: Queryable, ref: string): Promise<GroupRow | null> {
  return oneRow<GroupRow>(q, `SELECT * FROM pod_groups WHERE ${byRef(ref)} AND desired_state <> 'removed'`, [ref]);
}

const announce = (q: Queryable, slugs: string[]) => notifyEach(q, "pod_routes", slugs);

/** Moves live pods (not group members' rows: those move with their group) and the volumes they mount. */
export async function movePods(q: Queryable, ids: string[], to: MoveTo): Promise<void> {
  const { rows } = await q.query<{ slug: string }>(
    `UPDATE pods SET owner_kind = $2, owner_id = $3, account_id = $4, updated_at = now()
      WHERE id = ANY($1::uuid[]) AND desired_state <> 'removed' RETURNING slug`,
    [ids, to.owner.kind, to.owner.id, to.accountId],
  );
  const { rows: mounted } = await q.query<{ id: string }>(
    `SELECT v.id::text FROM volumes v JOIN pods p ON ${MOUNTS}
      WHERE p.id = ANY($1::uuid[]) AND p.desired_state <> 'removed' AND v.state <> 'removed'`,
    [ids],
  );
  if (mounted.length) await moveVolumes(q, [...new Set(mounted.map((r) => r.id))], to);
  await announce(
    q,
    rows.map((r) => r.slug),
  );
}

/** Moves live groups with every member pod (the edge serves a group by its slug, and each member by its own). */
export async function moveGroups(q: Queryable, ids: string[], to: MoveTo): Promise<void> {
  const set = "owner_kind = $2, owner_id = $3, account_id = $4";
  const args = [ids, to.owner.kind, to.owner.id, to.accountId];
  const groups = await q.query<{ slug: string }>(
    `UPDATE pod_groups SET ${set} WHERE id = ANY($1::uuid[]) AND desired_state <> 'removed' RETURNING slug`,
    args,
  );
  const members = await q.query<{ slug: string }>(
    `UPDATE pods SET ${set}, updated_at = now() WHERE group_id = ANY($1::uuid[]) RETURNING slug`,
    args,
  );
  await announce(
    q,
    [...groups.rows, ...members.rows].map((r) => r.slug),
  );
}

/**
 * Moves live volumes. A volume mounted by a live pod that stays with another owner is refused (designate the pod:
 * its volumes move with it), and so is a name the new owner already uses (volume names are unique per owner).
 */
export async function moveVolumes(q: Queryable, ids: string[], to: MoveTo): Promise<void> {
  const { rows: held } = await q.query<{ volume: string; pod: string }>(
    `SELECT v.name AS volume, p.slug AS pod FROM volumes v JOIN pods p ON ${MOUNTS}
      WHERE v.id = ANY($1::uuid[]) AND v.state <> 'removed' AND p.desired_state <> 'removed'
        AND NOT (p.owner_kind = $2 AND p.owner_id = $3) LIMIT 1`,
    [ids, to.owner.kind, to.owner.id],
  );
  if (held[0])
    throw new ApiError(
      "conflict",
      `Volume ${held[0].volume} is mounted by pod ${held[0].pod}, which stays with its owner; move the pod (its volumes go with it). Nothing was moved.`,
    );
  const { rows: clash } = await q.query<{ name: string }>(
    `SELECT m.name FROM volumes m JOIN volumes o ON o.name = m.name AND o.owner_kind = $2 AND o.owner_id = $3
        AND o.state <> 'removed' AND o.id <> ALL($1::uuid[])
      WHERE m.id = ANY($1::uuid[]) AND m.state <> 'removed' LIMIT 1`,
    [ids, to.owner.kind, to.owner.id],
  );
  if (clash[0]) throw volumeClash(clash[0].name);
  try {
    await moveOwned(q, OWNED_VOLUMES, ids, to);
  } catch (err) {
    // two volumes of one name moving to one owner together
    if (isUniqueViolation(err, "volumes_name_live")) throw volumeClash(null);
    throw err;
  }
}

const volumeClash = (name: string | null) =>
  new ApiError(
    "conflict",
    `The new owner already has a volume named ${name ?? "like one of these"} (volume names are unique per owner); remove or rename one first. Nothing was moved.`,
  );

/** A pod's attached databases and mounted volumes. */
export async function podTies(q: Queryable, podId: string): Promise<{ kind: string; id: string }[]> {
  return allRows<{ kind: string; id: string }>(
    q,
    `SELECT 'database' AS kind, d AS id FROM pods p, jsonb_array_elements_text(p.databases) AS d WHERE p.id = $1
     UNION
     SELECT 'volume', v.id::text FROM pods p JOIN volumes v ON ${MOUNTS} WHERE p.id = $1 AND v.state <> 'removed'`,
    [podId],
  );
}

/** The databases a group's live members attach. */
export async function groupTies(q: Queryable, groupId: string): Promise<{ kind: string; id: string }[]> {
  return allRows<{ kind: string; id: string }>(
    q,
    `SELECT DISTINCT 'database' AS kind, d AS id FROM pods p, jsonb_array_elements_text(p.databases) AS d
      WHERE p.group_id = $1 AND p.desired_state <> 'removed'`,
    [groupId],
  );
}

/** The live apps attaching a database: a pod, or the group of a member pod. */
export async function databaseTies(q: Queryable, databaseId: string): Promise<{ kind: string; id: string }[]> {
  return allRows<{ kind: string; id: string }>(
    q,
    `SELECT DISTINCT CASE WHEN group_id IS NULL THEN 'pod' ELSE 'pod-group' END AS kind,
            COALESCE(group_id, id)::text AS id
       FROM pods WHERE databases @> $1::jsonb AND desired_state <> 'removed'`,
    [JSON.stringify([databaseId])],
  );
}

/** The live pod mounting a volume (at most one: one writer). */
export async function volumeTies(q: Queryable, volumeId: string): Promise<{ kind: string; id: string }[]> {
  return allRows<{ kind: string; id: string }>(
    q,
    `SELECT CASE WHEN p.group_id IS NULL THEN 'pod' ELSE 'pod-group' END AS kind,
            COALESCE(p.group_id, p.id)::text AS id
       FROM pods p JOIN volumes v ON ${MOUNTS} WHERE v.id = $1 AND p.desired_state <> 'removed'`,
    [volumeId],
  );
}
