import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

/** The running databases this host holds, for the per-minute metrics sampler (src/metrics). */
export async function databasesToSample(q: Queryable, hostId: string): Promise<{ id: string; owner: Owner }[]> {
  const { rows } = await q.query<{ id: string; owner_kind: Owner["kind"]; owner_id: string }>(
    `SELECT id::text, owner_kind, owner_id::text FROM databases
      WHERE host_id = $1 AND state = 'running' AND desired_state = 'running' ORDER BY id`,
    [hostId],
  );
  return rows.map((r) => ({ id: r.id, owner: { kind: r.owner_kind, id: r.owner_id } }));
}
