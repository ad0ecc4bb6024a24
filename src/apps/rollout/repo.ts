import { oneRow, type Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

export interface RolloutRow {
  id: string;
  pod_id: string;
  generation: number;
  image: string;
  reason: string;
  state: string;
  restarts: number;
  created_at: Date;
  serving_at: Date | null;
  ended_at: Date | null;
}

/** A rollout of one of the owner's pods, by rollout id; a pod id (or slug) names its newest rollout. */
export async function findRollout(q: Queryable, owner: Owner, ref: string): Promise<RolloutRow | null> {
  return oneRow<RolloutRow>(
    q,
    `SELECT r.* FROM pod_rollouts r JOIN pods p ON p.id = r.pod_id
      WHERE p.owner_kind = $1 AND p.owner_id = $2
        AND (r.id::text = $3 OR p.id::text = $3 OR (p.slug = $3 AND p.desired_state <> 'removed'))
      ORDER BY (r.id::text = $3) DESC, r.generation DESC LIMIT 1`,
    [owner.kind, owner.id, ref],
  );
}

/** Groups whose members are being rolled (or rolled back) to the group's spec. */
export async function rollingGroupIds(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM pod_groups WHERE desired_state = 'running' AND rollout->>'state' IN ('rolling', 'rolling_back')`,
  );
  return rows.map((r) => r.id);
}

/** The group's rollout (and, going back, its spec). */
export async function setGroupRollout(
  q: Queryable,
  groupId: string,
  rollout: Record<string, unknown>,
  spec?: unknown,
): Promise<void> {
  await q.query("UPDATE pod_groups SET rollout = $2, spec = COALESCE($3::jsonb, spec) WHERE id = $1", [
    groupId,
    JSON.stringify(rollout),
    spec === undefined ? null : JSON.stringify(spec),
  ]);
}
