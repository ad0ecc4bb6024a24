import { inTransaction, type Queryable } from "../store/db.js";
import type { OwnerKind } from "../kernel/owner.js";
import { recordEvent, type EventType } from "../events/public.js";

/** Rollout rows whose changes are events (src/events/public.ts), each recorded in the transaction of the change. */
// a change that took over from a serving generation is a rollout (a first start is not), as the local reconciler says
export async function rolloutServing(q: Queryable, podId: string, generation: number): Promise<void> {
  if (!("release" in q)) return inTransaction(q, (tx) => rolloutServing(tx, podId, generation)); // with its event
  const { rows } = await q.query<{ generation: number; old: string }>(
    `UPDATE pod_rollouts r SET state = CASE WHEN r.generation = $2 THEN 'serving' ELSE 'replaced' END,
        serving_at = CASE WHEN r.generation = $2 THEN COALESCE(r.serving_at, now()) ELSE r.serving_at END,
        ended_at = CASE WHEN r.generation <> $2 THEN COALESCE(r.ended_at, now()) ELSE r.ended_at END
      FROM (SELECT id, state AS old FROM pod_rollouts WHERE pod_id = $1) o
      WHERE r.id = o.id AND r.pod_id = $1 AND r.state IN ('pending', 'serving') AND r.generation <= $2
      RETURNING r.generation, o.old`,
    [podId, generation],
  );
  if (
    rows.some((r) => r.generation === generation && r.old === "pending") &&
    rows.some((r) => r.generation !== generation && r.old === "serving")
  )
    await podEvent(q, podId, "pod.rollout.succeeded", { generation });
}

export async function rolloutCrashed(q: Queryable, podId: string, generation: number, failed: boolean): Promise<void> {
  if (!("release" in q)) return inTransaction(q, (tx) => rolloutCrashed(tx, podId, generation, failed)); // with its event
  const { rows } = await q.query<{ old: string }>(
    `UPDATE pod_rollouts r SET restarts = r.restarts + 1, state = CASE WHEN $3 THEN 'failed' ELSE r.state END,
        ended_at = CASE WHEN $3 THEN now() ELSE r.ended_at END
      FROM (SELECT id, state AS old FROM pod_rollouts WHERE pod_id = $1 AND generation = $2) o
      WHERE r.id = o.id RETURNING o.old`,
    [podId, generation, failed],
  );
  // kept crashing until the platform stopped restarting it
  if (failed && rows.some((r) => r.old !== "failed")) await podEvent(q, podId, "pod.crash_loop", { generation });
}

/** An event about a pod, in the caller's transaction (src/events/public.ts). */
export async function podEvent(
  q: Queryable,
  podId: string,
  type: EventType,
  data: Record<string, unknown>,
): Promise<void> {
  const { rows } = await q.query<{ owner_kind: OwnerKind; owner_id: string; name: string }>(
    "SELECT owner_kind, owner_id, name FROM pods WHERE id = $1",
    [podId],
  );
  const p = rows[0];
  if (p)
    await recordEvent(q, {
      type,
      owner: { kind: p.owner_kind, id: p.owner_id },
      resource: { kind: "pod", id: podId },
      data: { name: p.name, ...data },
    });
}
