import type { JobQueue } from "../jobs/queue.js";
import type { Lifecycle, MeteredResource, MeteringSource } from "../kernel/area.js";
import type { Owner } from "../kernel/owner.js";
import { enqueueSystem } from "./jobs.js";
import * as repo from "./repo.js";
import { pauseMemberDatabases, resumeMemberDatabases } from "./lifecycle-repo.js";
import { meteredResource } from "../kernel/metered.js";

const KIND = "database";

// idle-stopped (scale-to-zero) pays as paused: storage, no compute
const metered = (r: repo.BillableRow): MeteredResource =>
  meteredResource(r, KIND, r.size, r.storage_gb, r.state === "idle_stopped" ? "paused" : r.state);

/** "kind:id" → the owner it names (ownerKey in kernel/owner.ts; ids never contain ":" but kinds come first). */
function parseOwnerKey(key: string): Owner {
  const i = key.indexOf(":");
  return { kind: key.slice(0, i) as Owner["kind"], id: key.slice(i + 1) };
}

/**
 * What billing meters of managed PostgreSQL: every instance running or keeping data (paused), dev
 * included (its price is 0). Pages follow (owner_kind, owner_id, id), the order of ownerKey then id.
 */
export function databaseMetering(): MeteringSource {
  return {
    kind: KIND,
    billable: async (q, { createdBefore, after, limit }) =>
      (
        await repo.billableDatabases(q, {
          createdBefore,
          limit,
          after: after && { owner: parseOwnerKey(after[0]), id: after[1] },
        })
      ).map(metered),
    billableOf: async (q, owner) => (await repo.billableDatabasesOf(q, owner)).map(metered),
    describe: async (q, ids) =>
      new Map((await repo.namesOf(q, ids)).map((r) => [r.id, { name: r.name, slug: r.slug }])),
  };
}

/**
 * Billing pausing an owner (overdue, budgets, spend caps): running paid instances get desired state
 * paused with the reason shown in status_reason, and a stop command; resume starts again only those
 * a pause with the same reason stopped. Commands are recorded with `q` (in the caller's transaction if
 * it has one). Their jobs are sent at once; a send that fails, or a job that runs before the commit
 * and finds nothing, is made good by the reconciler, so neither fails the caller.
 */
export function databaseLifecycle({ jobs }: { jobs: Pick<JobQueue, "send"> }): Lifecycle {
  const send: Pick<JobQueue, "send"> = {
    send: (name, data, options) => jobs.send(name, data, options).catch(() => null),
  };
  return {
    pause: async (q, owner, reason) => {
      const ids = await repo.pausePaidDatabases(q, owner, reason);
      for (const id of ids) await enqueueSystem(q, send, id, "stop");
      return ids;
    },
    resume: async (q, owner, reason) => {
      const ids = await repo.resumePausedDatabases(q, owner, reason);
      for (const id of ids) await enqueueSystem(q, send, id, "start");
      return ids;
    },
    pauseMember: async (q, owner, accountId, reason) => {
      const ids = await pauseMemberDatabases(q, owner, accountId, reason);
      for (const id of ids) await enqueueSystem(q, send, id, "stop");
      return ids;
    },
    resumeMember: async (q, owner, accountId, reason) => {
      const ids = await resumeMemberDatabases(q, owner, accountId, reason);
      for (const id of ids) await enqueueSystem(q, send, id, "start");
      return ids;
    },
  };
}
