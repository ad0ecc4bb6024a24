/** The API side's SQL: buckets and access keys (object rows are the gateway's, gateway/repo.ts). */
import { isUuid, oneRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { findByRef, listByRefs, type RefLookup } from "../store/find.js";

export interface BucketRow {
  id: string;
  name: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  size_bytes: number;
  object_count: number;
  created_at: Date;
}

const BUCKET = `id, name, owner_kind, owner_id, account_id, created_at,
  size_bytes + COALESCE((SELECT sum(d.bytes) FROM bucket_usage_deltas d WHERE d.bucket_id = buckets.id), 0)::bigint AS size_bytes,
  object_count + COALESCE((SELECT sum(d.objects) FROM bucket_usage_deltas d WHERE d.bucket_id = buckets.id), 0)::bigint AS object_count`;

export async function insertBucket(
  q: Queryable,
  b: { name: string; owner: Owner; accountId: string },
): Promise<BucketRow> {
  const { rows } = await q.query<BucketRow>(
    `INSERT INTO buckets (name, owner_kind, owner_id, account_id) VALUES ($1, $2, $3, $4)
     RETURNING id, name, owner_kind, owner_id, account_id, created_at, size_bytes, object_count`,
    [b.name, b.owner.kind, b.owner.id, b.accountId],
  );
  return rows[0];
}

/** buckets as the shared lookups read them: live ones, by id or name */
const BUCKETS: RefLookup = { table: "buckets", columns: BUCKET, refColumn: "name", where: "deleted_at IS NULL" };

export const listBuckets = (q: Queryable, owner: Owner): Promise<BucketRow[]> =>
  listByRefs<BucketRow>(q, BUCKETS, owner, null, "created_at, id");

/** The owner's live bucket by id or name; `lock` takes its row for the transaction. */
export const findBucket = (q: Queryable, owner: Owner, ref: string, lock = false): Promise<BucketRow | null> =>
  findByRef<BucketRow>(q, BUCKETS, owner, ref, { forUpdate: lock });

/** Multipart uploads in progress and the bytes their parts hold. */
export async function pendingUploads(q: Queryable, bucketId: string): Promise<{ uploads: number; bytes: number }> {
  const { rows } = await q.query<{ uploads: number; bytes: number }>(
    `SELECT (SELECT count(*)::int FROM bucket_uploads WHERE bucket_id = $1) AS uploads,
            (SELECT COALESCE(sum(size), 0)::bigint FROM bucket_upload_parts WHERE bucket_id = $1) AS bytes`,
    [bucketId],
  );
  return rows[0];
}

/**
 * Empties a bucket's rows (objects, uploads and their parts) and marks it deleted; returns the blobs the caller
 * removes from storage after the commit.
 */
export async function deleteBucket(q: Queryable, bucketId: string): Promise<string[]> {
  const { rows } = await q.query<{ blob: string }>(
    `WITH objects AS (DELETE FROM bucket_objects WHERE bucket_id = $1 RETURNING blobs),
          parts AS (DELETE FROM bucket_upload_parts WHERE bucket_id = $1 RETURNING blob)
     SELECT unnest(blobs) AS blob FROM objects UNION ALL SELECT blob FROM parts`,
    [bucketId],
  );
  await q.query("DELETE FROM bucket_uploads WHERE bucket_id = $1", [bucketId]);
  await q.query("DELETE FROM bucket_usage_deltas WHERE bucket_id = $1", [bucketId]);
  await q.query("UPDATE buckets SET deleted_at = now(), size_bytes = 0, object_count = 0 WHERE id = $1", [bucketId]);
  return rows.map((r) => r.blob);
}

export interface KeyRow {
  id: string;
  name: string;
  access_key_id: string;
  permission: "read" | "read_write";
  bucket_ids: string[] | null;
  created_at: Date;
  last_used_at: Date | null;
}

const KEY = "id, name, access_key_id, permission, bucket_ids, created_at, last_used_at";

export async function insertKey(
  q: Queryable,
  k: {
    name: string;
    accessKeyId: string;
    secretSealed: string;
    owner: Owner;
    accountId: string;
    permission: string;
    bucketIds: string[] | null;
  },
): Promise<KeyRow> {
  const { rows } = await q.query<KeyRow>(
    `INSERT INTO bucket_keys (name, access_key_id, secret_sealed, owner_kind, owner_id, account_id, permission, bucket_ids)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY}`,
    [k.name, k.accessKeyId, k.secretSealed, k.owner.kind, k.owner.id, k.accountId, k.permission, k.bucketIds],
  );
  return rows[0];
}

export const listKeys = (q: Queryable, owner: Owner): Promise<KeyRow[]> =>
  listByRefs<KeyRow>(
    q,
    { table: "bucket_keys", columns: KEY, refColumn: null, where: "revoked_at IS NULL" },
    owner,
    null,
    "created_at, id",
  );

/** Revokes the owner's live key; false when there is none with that id. */
/** Revokes a live key; its name and issuer, or null when there is none. */
export async function revokeKey(
  q: Queryable,
  owner: Owner,
  id: string,
): Promise<{ name: string; account_id: string } | null> {
  if (!isUuid(id)) return null;
  return oneRow<{ name: string; account_id: string }>(
    q,
    `UPDATE bucket_keys SET revoked_at = now() WHERE id = $1 AND owner_kind = $2 AND owner_id = $3 AND revoked_at IS NULL
     RETURNING name, account_id`,
    [id, owner.kind, owner.id],
  );
}
