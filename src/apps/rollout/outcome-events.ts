import { recordEvent } from "../../events/public.js";
import type { Owner } from "../../kernel/owner.js";
import type { Queryable } from "../../store/db.js";

/**
 * The end of a pod's or group's rollout, as two events in its transaction: `pod.rollout.<outcome>` for those who
 * follow apps, and the generic `deploy.succeeded` / `deploy.failed` that static sites' deployments also send, so one
 * subscription hears every deploy (as Vercel's deployment events and Render's deploy notifications cover any
 * service). Both carry the same data; the deploy event adds `resource_kind`.
 */
export async function recordRolloutOutcome(
  tx: Queryable,
  outcome: "succeeded" | "rolled_back",
  owner: Owner,
  resource: { kind: "pod" | "pod_group"; id: string },
  data: Record<string, unknown>,
): Promise<void> {
  await recordEvent(tx, { type: `pod.rollout.${outcome}`, owner, resource, data });
  await recordEvent(tx, {
    type: outcome === "succeeded" ? "deploy.succeeded" : "deploy.failed",
    owner,
    resource,
    data: { resource_kind: resource.kind, ...data },
  });
}
