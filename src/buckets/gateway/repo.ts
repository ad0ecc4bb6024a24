/**
 * The gateway's SQL: keys and buckets as requests see them (no cache, so a revoked key is refused at once),
 * object rows, multipart uploads, request counts and the blobs rows still name. Object metadata lives in the
 * control store so every gateway process over one store and one backend sees the same objects.
 */
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";

export interface KeyRow {
  id: string;
  access_key_id: string;
  secret_sealed: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  permission: "read" | "read_write";
  bucket_ids: string[] | null;
  revoked_at: Date | null;
}

export interface BucketRef {
  id: string;
  name: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  created_at: Date;
}

/**
 * The key (revoked ones too, so the answer can say so), the named bucket and, for reads, the named object: one
 * round trip for what most requests need.
 */
export async function keyAndBucket(
  q: Queryable,
  accessKeyId: string,
  bucket: string | null,
  objectKey: string | null = null,
): Promise<{ key: KeyRow | null; bucket: BucketRef | null; object: ObjectRow | null }> {
  const { rows } = await q.query<{
    key: KeyRow | null;
    bucket: BucketRef | null;
    object: (ObjectRow & { blob_sizes: unknown[] }) | null;
  }>({
    // named: parsed and planned once per connection, this runs on every request
    name: "s3-key-bucket-object",
    text: `WITH b AS (SELECT id, name, owner_kind, owner_id, created_at FROM buckets WHERE name = $2 AND deleted_at IS NULL)
     SELECT (SELECT row_to_json(k) FROM (SELECT id, access_key_id, secret_sealed, owner_kind, owner_id, permission,
                    bucket_ids, revoked_at FROM bucket_keys WHERE access_key_id = $1) k) AS key,
            (SELECT row_to_json(b) FROM b) AS bucket,
            (SELECT row_to_json(o) FROM (SELECT ${OBJECT_COLUMNS} FROM bucket_objects
                    WHERE $3::text IS NOT NULL AND bucket_id = (SELECT id FROM b) AND key = $3) o) AS object`,
    values: [accessKeyId, bucket, objectKey],
  });
  const r = rows[0];
  return {
    key: r.key && { ...r.key, revoked_at: r.key.revoked_at && new Date(r.key.revoked_at) },
    bucket: r.bucket && { ...r.bucket, created_at: new Date(r.bucket.created_at) },
    object: r.object && { ...objectRow(r.object), last_modified: new Date(r.object.last_modified) },
  };
}

export async function bucketsOf(q: Queryable, owner: Owner, ids: string[] | null): Promise<BucketRef[]> {
  return allRows<BucketRef>(
    q,
    `SELECT id, name, owner_kind, owner_id, created_at FROM buckets
      WHERE owner_kind = $1 AND owner_id = $2 AND deleted_at IS NULL AND ($3::uuid[] IS NULL OR id = ANY($3::uuid[]))
      ORDER BY name`,
    [owner.kind, owner.id, ids],
  );
}

export interface ObjectRow {
  bucket_id: string;
  key: string;
  size: number;
  etag: string;
  blobs: string[];
  blob_sizes: number[];
  content_type: string;
  headers: Record<string, string>;
  metadata: Record<string, string>;
  checksums: Record<string, string>;
  last_modified: Date;
}

const OBJECT_COLUMNS = `bucket_id, key, size, etag, blobs, blob_sizes::text[] AS blob_sizes, content_type, headers, metadata,
  checksums, last_modified`;
const objectRow = (r: ObjectRow & { blob_sizes: unknown[] }): ObjectRow => ({
  ...r,
  blob_sizes: r.blob_sizes.map(Number),
});

/**
 * With `lock`: serialises writers of one key for the transaction (an advisory lock, since the row may not exist
 * yet) and locks the current row, so a replaced object's size and blobs are exactly the ones this writer sees.
 */
export async function getObject(q: Queryable, bucketId: string, key: string, lock = false): Promise<ObjectRow | null> {
  if (lock) await q.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 7312022))", [bucketId, key]);
  const { rows } = await q.query(
    `SELECT ${OBJECT_COLUMNS} FROM bucket_objects WHERE bucket_id = $1 AND key = $2 ${lock ? "FOR UPDATE" : ""}`,
    [bucketId, key],
  );
  return rows[0] ? objectRow(rows[0]) : null;
}

export type NewObject = Omit<ObjectRow, "last_modified">;

/**
 * Writes the object row in place of any older one (the caller holds the row lock from getObject(lock)) and keeps
 * the bucket's size and count; returns the new modification time.
 */
export async function putObjectRow(q: Queryable, o: NewObject, previous: ObjectRow | null): Promise<Date> {
  const { rows } = await q.query<{ last_modified: Date }>(
    `INSERT INTO bucket_objects (bucket_id, key, size, etag, blobs, blob_sizes, content_type, headers, metadata, checksums)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (bucket_id, key) DO UPDATE SET size = EXCLUDED.size, etag = EXCLUDED.etag, blobs = EXCLUDED.blobs,
       blob_sizes = EXCLUDED.blob_sizes, content_type = EXCLUDED.content_type, headers = EXCLUDED.headers,
       metadata = EXCLUDED.metadata, checksums = EXCLUDED.checksums, last_modified = now()
     RETURNING last_modified`,
    [o.bucket_id, o.key, o.size, o.etag, o.blobs, o.blob_sizes, o.content_type, o.headers, o.metadata, o.checksums],
  );
  await adjustBucket(q, o.bucket_id, o.size - (previous?.size ?? 0), previous ? 0 : 1);
  return rows[0].last_modified;
}

/** What a conditional write asks (attributes.ts parses the headers into it). */
export interface WriteConditions {
  /** If-None-Match: * */
  ifNoneMatch: boolean;
  /** If-Match: the ETags accepted (unquoted); null: no condition */
  ifMatch: string[] | null;
}

/**
 * Writes an object in one round trip (the SQL function bucket_put_object of migration 022): the key's lock, the
 * write conditions, the row and the size delta. Returns the outcome, the replaced object's blobs and the time.
 */
export async function putObject(
  q: Queryable,
  o: NewObject,
  cond: WriteConditions,
): Promise<{
  outcome: "ok" | "bucket_gone" | "precondition_failed" | "no_such_key";
  replaced: string[];
  modified: Date;
}> {
  const { rows } = await q.query<{ outcome: "ok"; replaced: string[] | null; modified: Date }>({
    name: "s3-put-object",
    text: "SELECT outcome, replaced, modified FROM bucket_put_object($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    values: [
      o.bucket_id,
      o.key,
      o.size,
      o.etag,
      o.blobs,
      o.blob_sizes,
      o.content_type,
      o.headers,
      o.metadata,
      o.checksums,
      cond.ifNoneMatch,
      cond.ifMatch,
    ],
  });
  return { outcome: rows[0].outcome, replaced: rows[0].replaced ?? [], modified: rows[0].modified };
}

/** Deletes one key in one statement (the row lock orders it after a write in progress); returns its blobs. */
export async function deleteObject(q: Queryable, bucketId: string, key: string): Promise<string[]> {
  const { rows } = await q.query<{ blobs: string[] }>(
    `WITH gone AS (DELETE FROM bucket_objects WHERE bucket_id = $1 AND key = $2 RETURNING blobs, size),
          delta AS (INSERT INTO bucket_usage_deltas (bucket_id, bytes, objects) SELECT $1, -size, -1 FROM gone)
     SELECT blobs FROM gone`,
    [bucketId, key],
  );
  return rows[0]?.blobs ?? [];
}

/**
 * Records the change of the bucket's size and count as a delta row (folded later, so writers of one bucket never
 * queue on its row). The share lock on the bucket's row is what orders an object change against the bucket's
 * deletion: a change committing after the bucket was deleted finds no live row and rolls back.
 */
async function adjustBucket(q: Queryable, bucketId: string, bytes: number, count: number): Promise<void> {
  const { rowCount } = await q.query(
    `WITH live AS (SELECT id FROM buckets WHERE id = $1 AND deleted_at IS NULL FOR SHARE)
     INSERT INTO bucket_usage_deltas (bucket_id, bytes, objects) SELECT id, $2, $3 FROM live`,
    [bucketId, bytes, count],
  );
  if (!rowCount) throw new BucketGone();
}

/** Folds the deltas into the buckets' rows (one statement: readers see either side of it, never both). */
export async function foldUsageDeltas(q: Queryable): Promise<void> {
  await q.query(
    `WITH d AS (DELETE FROM bucket_usage_deltas RETURNING bucket_id, bytes, objects),
          s AS (SELECT bucket_id, sum(bytes) AS bytes, sum(objects) AS objects FROM d GROUP BY bucket_id)
     UPDATE buckets b SET size_bytes = b.size_bytes + s.bytes, object_count = b.object_count + s.objects
       FROM s WHERE b.id = s.bucket_id`,
  );
}

/** The bucket was deleted while the request ran (the gateway answers NoSuchBucket). */
export class BucketGone extends Error {
  constructor() {
    super("the bucket was deleted");
  }
}

/** Up to `limit` keys after `after` (exclusive) that start with `prefix`, in byte order. */
export async function listObjects(
  q: Queryable,
  bucketId: string,
  prefix: string,
  after: string,
  limit: number,
): Promise<ObjectRow[]> {
  const { rows } = await q.query(
    `SELECT ${OBJECT_COLUMNS} FROM bucket_objects
      WHERE bucket_id = $1 AND key > $2 AND key >= $3 AND key < $3 || U&'\\+10FFFF' ORDER BY key LIMIT $4`,
    [bucketId, after, prefix, limit],
  );
  return rows.map(objectRow);
}

export interface UploadRow {
  id: string;
  bucket_id: string;
  key: string;
  content_type: string;
  headers: Record<string, string>;
  metadata: Record<string, string>;
  checksum_algorithm: string | null;
  created_at: Date;
}

export async function createUpload(q: Queryable, u: Omit<UploadRow, "created_at">): Promise<void> {
  const { rowCount } = await q.query(
    `INSERT INTO bucket_uploads (id, bucket_id, key, content_type, headers, metadata, checksum_algorithm)
     SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM buckets WHERE id = $2 AND deleted_at IS NULL)`,
    [u.id, u.bucket_id, u.key, u.content_type, u.headers, u.metadata, u.checksum_algorithm],
  );
  if (!rowCount) throw new BucketGone();
}

export async function getUpload(
  q: Queryable,
  bucketId: string,
  key: string,
  id: string,
  lock = false,
): Promise<UploadRow | null> {
  return oneRow<UploadRow>(
    q,
    `SELECT * FROM bucket_uploads WHERE id = $1 AND bucket_id = $2 AND key = $3 ${lock ? "FOR UPDATE" : ""}`,
    [id, bucketId, key],
  );
}

export async function listUploads(q: Queryable, bucketId: string, prefix: string, limit: number): Promise<UploadRow[]> {
  return allRows<UploadRow>(
    q,
    `SELECT * FROM bucket_uploads WHERE bucket_id = $1 AND starts_with(key, $2) ORDER BY key, created_at LIMIT $3`,
    [bucketId, prefix, limit],
  );
}

export interface PartRow {
  part_number: number;
  blob: string;
  size: number;
  etag: string;
  checksums: Record<string, string>;
  last_modified: Date;
}

/** Records a part (in place of an earlier upload of the same number); returns the replaced part's blob. */
export async function putPart(
  q: Queryable,
  p: Omit<PartRow, "last_modified"> & { upload_id: string; bucket_id: string },
): Promise<string | null> {
  const { rows } = await q.query<{ old: string | null }>(
    `WITH old AS (SELECT blob FROM bucket_upload_parts WHERE upload_id = $1 AND part_number = $2 FOR UPDATE)
     INSERT INTO bucket_upload_parts (upload_id, part_number, bucket_id, blob, size, etag, checksums)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (upload_id, part_number) DO UPDATE SET blob = EXCLUDED.blob, size = EXCLUDED.size, etag = EXCLUDED.etag,
       checksums = EXCLUDED.checksums, last_modified = now()
     RETURNING (SELECT blob FROM old) AS old`,
    [p.upload_id, p.part_number, p.bucket_id, p.blob, p.size, p.etag, p.checksums],
  );
  return rows[0]?.old ?? null;
}

export async function listParts(q: Queryable, uploadId: string, after = 0, limit = 10_000): Promise<PartRow[]> {
  return allRows<PartRow>(
    q,
    `SELECT part_number, blob, size, etag, checksums, last_modified FROM bucket_upload_parts
      WHERE upload_id = $1 AND part_number > $2 ORDER BY part_number LIMIT $3`,
    [uploadId, after, limit],
  );
}

/** Removes the upload and its part rows; the parts' blobs are the caller's to keep or remove. */
export async function deleteUpload(q: Queryable, uploadId: string): Promise<void> {
  await q.query("DELETE FROM bucket_uploads WHERE id = $1", [uploadId]);
}

/** Request counts gathered by one gateway process since its last flush. */
export async function addRequestCounts(q: Queryable, counts: Map<string, number>): Promise<void> {
  if (!counts.size) return;
  await q.query(
    `INSERT INTO bucket_requests (bucket_id, requests)
     SELECT b, n FROM unnest($1::uuid[], $2::bigint[]) AS c(b, n) WHERE EXISTS (SELECT 1 FROM buckets WHERE id = c.b)`,
    [[...counts.keys()], [...counts.values()]],
  );
}

/** Of these blob ids, those an object or a part still names. */
export async function referencedBlobs(q: Queryable, ids: string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT o.b AS id FROM bucket_objects, unnest(blobs) AS o(b) WHERE blobs && $1::uuid[] AND o.b = ANY($1::uuid[])
     UNION SELECT blob FROM bucket_upload_parts WHERE blob = ANY($1::uuid[])`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

export async function touchKey(q: Queryable, keyId: string): Promise<void> {
  await q.query(
    "UPDATE bucket_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
    [keyId],
  );
}

/** Request counts billed more than a week ago: usage records keep what they said. */
export async function purgeMeteredRequests(q: Queryable): Promise<void> {
  await q.query("DELETE FROM bucket_requests WHERE metered_for < now() - interval '7 days'");
}

/** Aborts multipart uploads started more than `days` ago (their parts' blobs become orphans for the sweep). */
export async function expireUploads(q: Queryable, days: number): Promise<number> {
  const { rowCount } = await q.query(
    "DELETE FROM bucket_uploads WHERE created_at < now() - make_interval(days => $1)",
    [days],
  );
  return rowCount ?? 0;
}
