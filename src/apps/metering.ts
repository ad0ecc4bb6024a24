import type { Queryable } from "../store/db.js";
import type { Lifecycle, MeteredResource, MeteringSource } from "../kernel/area.js";
import type { Owner } from "../kernel/owner.js";
import type { JobQueue } from "../jobs/queue.js";
import { POD_KIND } from "./sizes.js";
import { sendReconcile } from "./service.js";

/*
 * What billing meters of apps: a pod pays its size's hourly price while it is meant to run (desired running,
 * whatever a crash says: the capacity is held for it); a stopped pod pays nothing. Pages in (owner, id) order.
 */
interface BillableRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  size: string;
}

const metered = (r: BillableRow): MeteredResource => ({
  id: r.id,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  kind: POD_KIND,
  size: r.size,
  storageGb: 0,
  state: "running",
});

const BILLABLE = "desired_state = 'running' AND state <> 'removed'";

export function podMetering(): MeteringSource {
  return {
    kind: POD_KIND,
    billable: async (q, { createdBefore, after, limit }) => {
      const { rows } = await q.query<BillableRow>(
        `SELECT id, owner_kind, owner_id, account_id, size FROM pods
          WHERE ${BILLABLE} AND created_at < $1
            AND ($2::text IS NULL OR (owner_kind || ':' || owner_id::text, id::text) > ($2, $3))
          ORDER BY owner_kind || ':' || owner_id::text, id::text LIMIT $4`,
        [createdBefore, after?.[0] ?? null, after?.[1] ?? null, limit],
      );
      return rows.map(metered);
    },
    billableOf: async (q, owner) => {
      const { rows } = await q.query<BillableRow>(
        `SELECT id, owner_kind, owner_id, account_id, size FROM pods WHERE ${BILLABLE} AND owner_kind = $1 AND owner_id = $2`,
        [owner.kind, owner.id],
      );
      return rows.map(metered);
    },
    describe: async (q, ids) => {
      const { rows } = await q.query<{ id: string; name: string; slug: string }>(
        "SELECT id, name, slug FROM pods WHERE id = ANY($1::uuid[])",
        [ids],
      );
      return new Map(rows.map((r) => [r.id, { name: r.name, slug: r.slug }]));
    },
  };
}

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
    const { rows } = await q.query<{ id: string; host_id: string }>(
      "SELECT id, host_id FROM pods WHERE id = ANY($1::uuid[]) AND host_id IS NOT NULL",
      [ids],
    );
    for (const r of rows) if (!(await isExternal(q, r.host_id))) await sendReconcile(jobs, r.id, r.host_id);
  };
  return {
    pause: async (q, owner, reason) => {
      const { rows } = await q.query<{ id: string }>(
        `UPDATE pods SET desired_state = 'stopped', paused_reason = $3, state_reason = $3, updated_at = now()
          WHERE owner_kind = $1 AND owner_id = $2 AND desired_state = 'running' AND size <> 'nano' RETURNING id`,
        [owner.kind, owner.id, reason],
      );
      await kick(
        q,
        rows.map((r) => r.id),
      );
      return rows.map((r) => r.id);
    },
    resume: async (q, owner, reason) => {
      const { rows } = await q.query<{ id: string }>(
        `UPDATE pods SET desired_state = 'running', paused_reason = NULL, state_reason = NULL, state = 'creating',
            generation = generation + 1, crash_count = 0, next_restart_at = NULL, updated_at = now()
          WHERE owner_kind = $1 AND owner_id = $2 AND desired_state = 'stopped' AND paused_reason = $3 RETURNING id`,
        [owner.kind, owner.id, reason],
      );
      await kick(
        q,
        rows.map((r) => r.id),
      );
      return rows.map((r) => r.id);
    },
  };
}
