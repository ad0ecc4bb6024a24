import type { Queryable } from "../store/db.js";
import { isUuid } from "../store/db.js";
import type { OwnedResource, OwnedResources } from "../orgs/contract.js";
import type { Owner } from "../kernel/owner.js";

/**
 * Buckets for organizations (contribution "owned"; src/orgs/README.md, "Company assets"). The gateway lets a key use a
 * bucket only when both have one owner (gateway/server.ts `covers`), reading keys from the store on every request.
 * So a move takes along the live S3 keys limited to moved buckets only (the apps using them keep working); keys of
 * every bucket of the old owner, or of other buckets too, stay with it and no longer reach the moved bucket. Names
 * are unique platform-wide: a move never collides.
 */
interface Row {
  id: string;
  name: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  created_at: Date;
}

const COLUMNS = "id::text, name, owner_kind, owner_id::text, account_id::text, created_at";

/** buckets have no lifecycle: a live one is ready */
const resource = (r: Row): OwnedResource => ({
  kind: "bucket",
  id: r.id,
  name: r.name,
  slug: r.name,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  state: "ready",
  createdAt: r.created_at,
});

async function list(q: Queryable, owner: Owner): Promise<OwnedResource[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM buckets WHERE owner_kind = $1 AND owner_id = $2 AND deleted_at IS NULL
      ORDER BY created_at, id`,
    [owner.kind, owner.id],
  );
  return rows.map(resource);
}

/** by id or name (names are unique among live buckets) */
async function find(q: Queryable, ref: string): Promise<OwnedResource | null> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM buckets WHERE ${isUuid(ref) ? "id = $1::uuid" : "name = $1"} AND deleted_at IS NULL`,
    [ref],
  );
  return rows[0] ? resource(rows[0]) : null;
}

async function reassign(q: Queryable, ids: string[], to: { owner: Owner; accountId: string }): Promise<void> {
  const args = [ids, to.owner.kind, to.owner.id, to.accountId];
  // the keys first, while the buckets still name their old owner
  await q.query(
    `UPDATE bucket_keys k SET owner_kind = $2, owner_id = $3, account_id = $4
      WHERE k.revoked_at IS NULL AND cardinality(k.bucket_ids) > 0 AND k.bucket_ids <@ $1::uuid[]
        AND EXISTS (SELECT 1 FROM buckets b WHERE b.id = ANY($1::uuid[]) AND b.deleted_at IS NULL
                      AND b.owner_kind = k.owner_kind AND b.owner_id = k.owner_id)`,
    args,
  );
  await q.query(
    `UPDATE buckets SET owner_kind = $2, owner_id = $3, account_id = $4
      WHERE id = ANY($1::uuid[]) AND deleted_at IS NULL`,
    args,
  );
}

export const bucketsOwned = (): OwnedResources => ({ kind: "bucket", list, find, reassign });
