import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { containerName } from "./container-spec.js";

/** A running pod on a host, as the metrics sampler needs it (src/metrics): its serving container and counts. */
export interface PodToSample {
  id: string;
  owner: Owner;
  /** the container serving it now (a rollout's new generation once it took over) */
  container: string;
  restartCount: number;
  /** the pod group it belongs to (a group's series adds its members') */
  groupId: string | null;
}

/** The pods this host runs now (state running, not removed), with their serving containers' names. */
export async function podsToSample(q: Queryable, hostId: string): Promise<PodToSample[]> {
  const { rows } = await q.query<{
    id: string;
    owner_kind: Owner["kind"];
    owner_id: string;
    generation: number;
    serving_generation: number | null;
    restart_count: number;
    group_id: string | null;
  }>(
    `SELECT id::text, owner_kind, owner_id::text, generation, serving_generation, restart_count, group_id::text
       FROM pods
      WHERE host_id = $1 AND state = 'running' AND desired_state <> 'removed' ORDER BY id`,
    [hostId],
  );
  return rows.map((r) => ({
    id: r.id,
    owner: { kind: r.owner_kind, id: r.owner_id },
    container: containerName(r.id, r.serving_generation ?? r.generation),
    restartCount: r.restart_count,
    groupId: r.group_id,
  }));
}

/** The live member pods' ids of a group (alert rules' runtime figures of a group, src/alerts). */
export async function groupPodIds(q: Queryable, groupId: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id::text FROM pods WHERE group_id = $1 AND desired_state <> 'removed'",
    [groupId],
  );
  return rows.map((r) => r.id);
}
