import type { Queryable } from "../store/db.js";
import type { Lifecycle, MeteredResource, MeteringSource } from "../kernel/area.js";
import type { JobQueue } from "../jobs/queue.js";
import { POD_KIND } from "./sizes.js";
import { meteredResource, tableMetering } from "../kernel/metered.js";
import { sendReconcile } from "./service.js";
import {
  BILLABLE_PODS,
  pauseMemberPods,
  pausePods,
  placedPods,
  podNames,
  resumeMemberPods,
  resumePods,
  type BillablePodRow,
} from "./lifecycle-repo.js";

/*
 * What billing meters of apps: a pod pays its size's hourly price while it is meant to run (desired running,
 * whatever a crash says: the capacity is held for it); a stopped pod pays nothing. Pages in (owner, id) order.
 */
const metered = (r: BillablePodRow): MeteredResource => meteredResource(r, POD_KIND, r.size, 0);

export const podMetering = (): MeteringSource =>
  tableMetering(
    POD_KIND,
    BILLABLE_PODS,
    metered,
    async (q, ids) => new Map((await podNames(q, ids)).map((r) => [r.id, { name: r.name, slug: r.slug }])),
  );

/**
 * Billing holding an owner's paid pods (overdue): they are stopped with the reason kept, and resume starts
 * only those this reason stopped. Free (nano) pods keep running.
 */
export function podLifecycle({
  jobs,
  isExternal = async () => false,
}: {
  jobs: Pick<JobQueue, "send">;
  /** an organization external host: its agent follows the change by itself, no job (src/orgs/hosts) */
  isExternal?: (q: Queryable, hostId: string) => Promise<boolean>;
}): Lifecycle {
  const kick = async (q: Queryable, ids: string[]) => {
    if (!ids.length) return;
    for (const r of await placedPods(q, ids))
      if (!(await isExternal(q, r.host_id))) await sendReconcile(jobs, r.id, r.host_id);
  };
  return {
    pause: async (q, owner, reason) => {
      const ids = await pausePods(q, owner, reason);
      await kick(q, ids);
      return ids;
    },
    resume: async (q, owner, reason) => {
      const ids = await resumePods(q, owner, reason);
      await kick(q, ids);
      return ids;
    },
    // one member's pods (pod group members included: they carry the group creator's account)
    pauseMember: async (q, owner, accountId, reason) => {
      const ids = await pauseMemberPods(q, owner, accountId, reason);
      await kick(q, ids);
      return ids;
    },
    resumeMember: async (q, owner, accountId, reason) => {
      const ids = await resumeMemberPods(q, owner, accountId, reason);
      await kick(q, ids);
      return ids;
    },
  };
}
