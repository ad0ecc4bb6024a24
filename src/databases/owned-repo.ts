/** The databases area's SQL for organizations (owned.ts): its owned table and the move of instances with backups. */
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { MoveTo, OwnedTable } from "../kernel/owned-repo.js";

/** what the API lists: a deleted instance is gone from the moment of the DELETE (repo.listDatabases) */
export const OWNED_DATABASES: OwnedTable = {
  kind: "database",
  table: "databases",
  columns: "id::text, name, slug, owner_kind, owner_id::text, account_id::text, state, created_at",
  live: "state <> 'removed' AND desired_state <> 'removed' AND purged_at IS NULL",
  refColumn: "slug",
};

/** Moves instances (removed ones too, until purged) and their backups; returns the owners they had. */
export async function moveDatabases(q: Queryable, ids: string[], to: MoveTo): Promise<Owner[]> {
  const { rows } = await q.query<{ owner_kind: Owner["kind"]; owner_id: string }>(
    `WITH old AS (SELECT id, owner_kind, owner_id FROM databases
                   WHERE id = ANY($1::uuid[]) AND purged_at IS NULL FOR UPDATE)
     UPDATE databases d SET owner_kind = $2, owner_id = $3, account_id = $4 FROM old
      WHERE d.id = old.id RETURNING old.owner_kind, old.owner_id::text`,
    [ids, to.owner.kind, to.owner.id, to.accountId],
  );
  await q.query(
    "UPDATE database_backups SET owner_kind = $2, owner_id = $3, account_id = $4 WHERE database_id = ANY($1::uuid[])",
    [ids, to.owner.kind, to.owner.id, to.accountId],
  );
  return rows.map((r) => ({ kind: r.owner_kind, id: r.owner_id }));
}
