/** The buckets area's SQL for organizations (owned.ts): its owned table and the move of buckets with their keys. */
import type { Queryable } from "../store/db.js";
import { moveOwned, type MoveTo, type OwnedTable } from "../kernel/owned-repo.js";

/** buckets have no lifecycle: a live one is ready; names are unique among live buckets */
export const OWNED_BUCKETS: OwnedTable = {
  kind: "bucket",
  table: "buckets",
  columns: "id::text, name, name AS slug, owner_kind, owner_id::text, account_id::text, 'ready' AS state, created_at",
  live: "deleted_at IS NULL",
  refColumn: "name",
};

export async function moveBuckets(q: Queryable, ids: string[], to: MoveTo): Promise<void> {
  // the keys first, while the buckets still name their old owner
  await q.query(
    `UPDATE bucket_keys k SET owner_kind = $2, owner_id = $3, account_id = $4
      WHERE k.revoked_at IS NULL AND cardinality(k.bucket_ids) > 0 AND k.bucket_ids <@ $1::uuid[]
        AND EXISTS (SELECT 1 FROM buckets b WHERE b.id = ANY($1::uuid[]) AND b.deleted_at IS NULL
                      AND b.owner_kind = k.owner_kind AND b.owner_id = k.owner_id)`,
    [ids, to.owner.kind, to.owner.id, to.accountId],
  );
  await moveOwned(q, OWNED_BUCKETS, ids, to);
}
