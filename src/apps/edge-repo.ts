/** What the edge serves of apps (edge-source.ts): a pod's or a group's ready replicas, and whether it sleeps. */
import { oneRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/** What the edge serves at <slug>: a live pod, or a group's running members. */
export interface EdgeTargetRow {
  kind: "pod" | "group";
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  addresses: string[];
  /** scale-to-zero: stopped for idleness (the edge wakes it), or a wake's start under way (the edge waits) */
  idle: "stopped" | "starting" | null;
}

/** how long after a wake the edge treats an app without a ready replica as starting (then: a failed start) */
const WAKING = "interval '10 minutes'";
const POD_READY = "state = 'running' AND address IS NOT NULL AND desired_state = 'running' AND ready";

export async function edgeTargetRows(q: Queryable, slug: string): Promise<EdgeTargetRow | null> {
  return oneRow<EdgeTargetRow>(
    q,
    `SELECT 'pod' AS kind, id, owner_kind, owner_id, account_id,
            CASE WHEN ${POD_READY} THEN ARRAY[address] ELSE ARRAY[]::text[] END AS addresses,
            CASE WHEN desired_state = 'idle_stopped' THEN 'stopped'
                 WHEN desired_state = 'running' AND woken_at > now() - ${WAKING} AND state <> 'failed'
                      AND NOT (${POD_READY}) THEN 'starting' END AS idle
       FROM pods WHERE slug = $1 AND desired_state <> 'removed'
     UNION ALL
     SELECT 'group', g.id, g.owner_kind, g.owner_id, g.account_id,
            COALESCE(array_agg(p.address) FILTER (WHERE p.state = 'running' AND p.address IS NOT NULL AND p.desired_state = 'running' AND p.ready), ARRAY[]::text[]),
            CASE WHEN g.desired_state = 'idle_stopped' THEN 'stopped'
                 WHEN g.desired_state = 'running' AND g.woken_at > now() - ${WAKING}
                      AND NOT COALESCE(bool_or(p.state = 'running' AND p.address IS NOT NULL AND p.desired_state = 'running' AND p.ready), false)
                      AND NOT COALESCE(bool_and(p.state = 'failed'), false) THEN 'starting' END
       FROM pod_groups g LEFT JOIN pods p ON p.group_id = g.id AND p.desired_state <> 'removed'
      WHERE g.slug = $1 AND g.desired_state <> 'removed' GROUP BY g.id
     LIMIT 1`,
    [slug],
  );
}
