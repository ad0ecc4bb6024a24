import {
  allRows,
  allValues,
  anyRows,
  oneRow,
  returnedRow,
  setClauses,
  type Db,
  type Queryable,
} from "../../store/db.js";
import { REMOVED_LAST, type PodRow } from "../repo.js";
import { finderOf, listerOf } from "../../store/find.js";
import type { NamedOwnerColumns } from "../../kernel/owned-repo.js";
import type { Checks, GroupDeploy } from "../checks/spec.js";

/** The member pods' spec as a group keeps it (env sealed like a pod's); volumes are per pod, so none. */
export interface GroupSpec {
  image: string;
  port: number | null;
  command: string[] | null;
  env_sealed: string;
  size: string;
  databases: string[];
  /** issue 29: the members' declared checks and rollout settings (absent in groups made before) */
  checks?: Checks | null;
  deploy?: GroupDeploy;
}

/** A pod group as stored: the members' spec, the replica bounds and what the autoscaler decided. */
export interface GroupRow extends NamedOwnerColumns {
  spec: GroupSpec;
  replica_min: number;
  replica_max: number;
  target_cpu_percent: number;
  desired_replicas: number;
  /** idle_stopped: every member stopped after idle_stop_seconds without requests; the next request wakes them */
  desired_state: "running" | "stopped" | "removed" | "idle_stopped";
  scale_hold: string | null;
  last_scaled_at: Date | null;
  /** scale-to-zero (src/apps/idle): null never */
  idle_stop_seconds: number | null;
  awake_since: Date;
  woken_at: Date | null;
  /** the release the spec is at (src/apps/releases/group-repo.ts) */
  release: number;
  created_at: Date;
  removed_at: Date | null;
}

export async function insertGroup(
  q: Queryable,
  g: Omit<GroupRow, "created_at" | "removed_at" | "release" | "awake_since" | "woken_at">,
): Promise<GroupRow> {
  return returnedRow<GroupRow>(
    q,
    `INSERT INTO pod_groups (id, owner_kind, owner_id, account_id, name, slug, spec, replica_min, replica_max,
       target_cpu_percent, desired_replicas, desired_state, scale_hold, last_scaled_at, idle_stop_seconds)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING *`,
    [
      g.id,
      g.owner_kind,
      g.owner_id,
      g.account_id,
      g.name,
      g.slug,
      JSON.stringify(g.spec),
      g.replica_min,
      g.replica_max,
      g.target_cpu_percent,
      g.desired_replicas,
      g.desired_state,
      g.scale_hold,
      g.last_scaled_at,
      g.idle_stop_seconds,
    ],
  );
}

/** The owner's group by id or slug (a live one before removed ones, newest first). */
export const findGroup = finderOf<GroupRow>({ table: "pod_groups", refColumn: "slug", order: REMOVED_LAST });

export async function groupById(
  q: Queryable,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<GroupRow | null> {
  return oneRow<GroupRow>(q, `SELECT * FROM pod_groups WHERE id = $1 ${opts.forUpdate ? "FOR UPDATE" : ""}`, [id]);
}

/** The owner's live groups, oldest first; `refs` (ids or slugs) narrows them for instance-limited keys. */
export const listGroups = listerOf<GroupRow>({
  table: "pod_groups",
  refColumn: "slug",
  where: "desired_state <> 'removed'",
});

/** A group's live member pods, oldest first. */
export async function membersOf(q: Queryable, groupId: string): Promise<PodRow[]> {
  return allRows<PodRow>(
    q,
    "SELECT * FROM pods WHERE group_id = $1 AND desired_state <> 'removed' ORDER BY created_at, id",
    [groupId],
  );
}

/** Live members of many groups at once (list views). */
export async function membersOfMany(q: Queryable, groupIds: string[]): Promise<Map<string, PodRow[]>> {
  const { rows } = await q.query<PodRow>(
    "SELECT * FROM pods WHERE group_id = ANY($1::uuid[]) AND desired_state <> 'removed' ORDER BY created_at, id",
    [groupIds],
  );
  const out = new Map<string, PodRow[]>(groupIds.map((id) => [id, []]));
  for (const r of rows) out.get(r.group_id!)!.push(r);
  return out;
}

/** Every pod that ever was a member (removed ones too): their metered usage is the group's spend. */
export async function everMemberIds(q: Queryable, groupId: string): Promise<string[]> {
  return allValues<string>(q, "id", "SELECT id FROM pods WHERE group_id = $1", [groupId]);
}

/** Whether a live pod holds the slug (pods and groups share the <slug>.<APPS_DOMAIN> names). */
export async function podSlugTaken(q: Queryable, slug: string): Promise<boolean> {
  return anyRows(q, "SELECT 1 FROM pods WHERE slug = $1 AND desired_state <> 'removed'", [slug]);
}

export type GroupChange = Partial<
  Pick<
    GroupRow,
    | "spec"
    | "replica_min"
    | "replica_max"
    | "target_cpu_percent"
    | "desired_replicas"
    | "desired_state"
    | "scale_hold"
    | "last_scaled_at"
    | "idle_stop_seconds"
  >
>;

export async function updateGroup(q: Queryable, id: string, change: GroupChange): Promise<GroupRow> {
  const values: unknown[] = [id];
  const sets = setClauses(change, values, (k, v) => (k === "spec" ? JSON.stringify(v) : v));
  if (change.desired_state === "removed") sets.push("removed_at = now()");
  // the idle clock starts again when scale-to-zero is set or changed
  if (change.idle_stop_seconds !== undefined) sets.push("awake_since = now()");
  return returnedRow<GroupRow>(
    q,
    `UPDATE pod_groups SET ${sets.length ? sets.join(", ") : "id = id"} WHERE id = $1 RETURNING *`,
    values,
  );
}

/** Live groups with at least one live member on the host: the ones this host's autoscaler samples. */
export async function groupsOnHost(q: Queryable, hostId: string): Promise<GroupRow[]> {
  return allRows<GroupRow>(
    q,
    `SELECT g.* FROM pod_groups g
      WHERE g.desired_state = 'running'
        AND EXISTS (SELECT 1 FROM pods p WHERE p.group_id = g.id AND p.host_id = $1 AND p.desired_state <> 'removed')
      ORDER BY g.created_at`,
    [hostId],
  );
}

/**
 * Groups whose live members are not what they want: a running group with a member count other than
 * desired_replicas (a failed creation, a member removed on its own), a removed one with members left.
 */
export async function groupsOffTarget(q: Queryable): Promise<GroupRow[]> {
  return allRows<GroupRow>(
    q,
    `SELECT g.* FROM pod_groups g
       CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM pods p
                            WHERE p.group_id = g.id AND p.desired_state <> 'removed') m
      WHERE (g.desired_state = 'running' AND g.desired_replicas <> m.n) OR (g.desired_state = 'removed' AND m.n > 0)
      ORDER BY g.created_at`,
  );
}

/**
 * Runs fn holding the group's session advisory lock (one converge or autoscaling step per group at a
 * time, across processes and hosts). `wait: false` gives up at once when another holds it (returns null).
 */
export async function withGroupLock<T>(
  db: Db,
  groupId: string,
  wait: boolean,
  fn: () => Promise<T>,
): Promise<T | null> {
  const lock = await db.connect();
  try {
    const key = "hashtext('pod-group:' || $1::text)";
    if (wait) await lock.query(`SELECT pg_advisory_lock(${key})`, [groupId]);
    else {
      const { rows } = await lock.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${key}) AS ok`, [groupId]);
      if (!rows[0]!.ok) return null;
    }
    try {
      return await fn();
    } finally {
      await lock.query(`SELECT pg_advisory_unlock(${key})`, [groupId]);
    }
  } finally {
    lock.release();
  }
}
