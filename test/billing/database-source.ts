/**
 * Stand-ins for the databases area's metering source and lifecycle, reading and changing the databases
 * table the way the real ones do (rows in state running/paused with their owner columns). They are
 * registered only when the databases area registered none, so tests keep passing once it does.
 */
import type { Lifecycle, MeteredResource, MeteringSource } from "../../src/kernel/area.js";
import type { Owner } from "../../src/kernel/owner.js";
import type { Platform } from "../../src/kernel/context.js";
import type { Queryable } from "../../src/store/db.js";
import { enqueueSystem } from "../../src/databases/jobs.js";

interface Row { id: string; account_id: string; owner_kind: Owner["kind"]; owner_id: string; size: string; storage_gb: number; state: "running" | "paused" }
const COLS = "id, account_id, owner_kind, owner_id, size, storage_gb, state";
const asResource = (r: Row): MeteredResource => ({
  id: r.id, owner: { kind: r.owner_kind, id: r.owner_id }, accountId: r.account_id, kind: "database", size: r.size, storageGb: r.storage_gb, state: r.state,
});

export const databasesTableSource: MeteringSource = {
  kind: "database",
  async billable(q, { createdBefore, after, limit }) {
    // (owner kind, owner id, id) order is the order of ownerKey() for the kinds resources have (account, org, partner_child)
    const [kind, ownerId] = after ? [after[0].slice(0, after[0].indexOf(":")), after[0].slice(after[0].indexOf(":") + 1)] : [null, null];
    const { rows } = await q.query<Row>(
      `SELECT ${COLS} FROM databases
        WHERE state IN ('running', 'paused') AND created_at < $1
          AND ($2::text IS NULL OR (owner_kind, owner_id, id) > ($2::text, $3::uuid, $4::uuid))
        ORDER BY owner_kind, owner_id, id LIMIT $5`,
      [createdBefore, kind, ownerId, after?.[1] ?? null, limit],
    );
    return rows.map(asResource);
  },
  async billableOf(q, owner) {
    const { rows } = await q.query<Row>(
      `SELECT ${COLS} FROM databases WHERE owner_kind = $1 AND owner_id = $2 AND state IN ('running', 'paused')`, [owner.kind, owner.id]);
    return rows.map(asResource);
  },
  async describe(q, ids) {
    const { rows } = await q.query<{ id: string; name: string; slug: string }>("SELECT id, name, slug FROM databases WHERE id = ANY($1::uuid[])", [ids]);
    return new Map(rows.map((r) => [r.id, { name: r.name, slug: r.slug }]));
  },
};

/** Pauses paid running databases of the owner (desired state and a stop command), resumes those it paused. */
export function databasesTableLifecycle(p: Platform): Lifecycle {
  const act = async (q: Queryable, sql: string, params: unknown[], command: string) => {
    const { rows } = await q.query<{ id: string }>(sql, params);
    for (const r of rows) await enqueueSystem(p.db, p.jobs, r.id, command);
    return rows.map((r) => r.id);
  };
  return {
    pause: (q, owner, reason) => act(q,
      `UPDATE databases SET desired_state = 'paused', status_reason = $3
        WHERE owner_kind = $1 AND owner_id = $2 AND desired_state = 'running' AND state = 'running' AND size <> 'dev' RETURNING id`,
      [owner.kind, owner.id, reason], "stop"),
    resume: (q, owner, reason) => act(q,
      `UPDATE databases SET desired_state = 'running'
        WHERE owner_kind = $1 AND owner_id = $2 AND status_reason = $3 AND desired_state = 'paused' RETURNING id`,
      [owner.kind, owner.id, reason], "start"),
  };
}

/** The platform's metering sources, with the stand-in for databases when the area registered none. */
export function withDatabaseHooks(p: Platform): readonly MeteringSource[] {
  if (!p.kernel.metering.some((s) => s.kind === "database")) p.kernel.addMetering(databasesTableSource);
  if (!p.kernel.lifecycles.some((l) => l.area === "databases")) p.kernel.addLifecycle("databases", databasesTableLifecycle(p));
  return p.kernel.metering;
}
