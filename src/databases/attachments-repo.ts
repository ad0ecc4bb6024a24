import { allRows, type Queryable, returnedIds } from "../store/db.js";
import type { Owner, OwnerKind } from "../kernel/owner.js";

/** The SQL of attachments (attachments.ts): which instances carry an allowlist the owner's app networks join. */

/** Whether a rotation ever succeeded on the instance (then a kept initial password is no longer the current one). */
export async function wasRotated(q: Queryable, databaseId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    "SELECT 1 FROM database_commands WHERE database_id = $1 AND kind = 'rotate_password' AND status = 'succeeded' LIMIT 1",
    [databaseId],
  );
  return (rowCount ?? 0) > 0;
}

/** The owner's instances (not deleted) whose allowlist is not empty: their pg_hba lists the owner's app networks. */
export async function allowlistedOf(q: Queryable, owner: Owner): Promise<string[]> {
  return returnedIds(
    q,
    `SELECT id FROM databases WHERE owner_kind = $1 AND owner_id = $2 AND desired_state <> 'removed' AND state <> 'removed'
        AND purged_at IS NULL AND jsonb_array_length(allowlist) > 0 ORDER BY id`,
    [owner.kind, owner.id],
  );
}

export interface AllowlistedRow {
  id: string;
  owner_kind: OwnerKind;
  owner_id: string;
  /** the app networks last applied (migration 016); null when never */
  app_cidrs: string[] | null;
}

/** Every instance with a non-empty allowlist and a server (running or paused), no command open: the reconciler's drift check. */
export async function allowlistedIdle(q: Queryable): Promise<AllowlistedRow[]> {
  return allRows<AllowlistedRow>(
    q,
    `SELECT d.id, d.owner_kind, d.owner_id, d.app_cidrs FROM databases d
      WHERE d.desired_state <> 'removed' AND d.state IN ('running', 'paused') AND d.purged_at IS NULL
        AND jsonb_array_length(d.allowlist) > 0
        AND NOT EXISTS (SELECT 1 FROM database_commands c WHERE c.database_id = d.id AND c.status IN ('queued', 'running'))
      ORDER BY d.owner_kind, d.owner_id, d.id`,
  );
}
