import type { AttachmentConsumer } from "./contract.js";
import type { JobQueue } from "../jobs/queue.js";
import * as repo from "./repo.js";
import { ownerSubnets } from "./networks-repo.js";
import { sendReconcile } from "./service.js";

/**
 * The apps side of attachments, registered with the kernel: the databases area lists a database's apps,
 * rolls them after a password rotation (each gets a new generation, started with the new URL before the old
 * replica stops) and admits the owner's pod networks in its allowlist, without reading the apps' tables.
 */
export function podAttachments(jobs: Pick<JobQueue, "send">): AttachmentConsumer {
  return {
    attachedTo: async (q, resource, id) => {
      if (resource !== "databases") return [];
      return (await repo.podsAttachedTo(q, id)).map((p) => ({
        kind: "pod",
        id: p.id,
        name: p.name,
        slug: p.slug,
        state: p.state,
      }));
    },
    refresh: async (q, resource, id) => {
      if (resource !== "databases") return [];
      const pods = await repo.bumpAttached(q, id);
      for (const p of pods) {
        await repo.recordRollout(q, p, "database credentials rotated");
        if (p.host_id) await sendReconcile(jobs, p.id, p.host_id);
      }
      return pods.map((p) => p.id);
    },
    sourceCidrs: (q, owner) => ownerSubnets(q, owner),
  };
}
