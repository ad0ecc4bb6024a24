/** The buckets area's SQL for billing (metering.ts): stored bytes per bucket, and the request counts to bill. */
import type { Owner } from "../kernel/owner.js";
import { allRows, type Queryable } from "../store/db.js";

/** a bucket (or its requests meter) with the quantity to bill: bytes stored, or requests counted */
export interface MeteredBucketRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  quantity: number;
}

/** a page of the billing contract: created before, after (owner key, id) in that order, at most limit */
export interface Page {
  createdBefore: Date;
  after?: [string, string] | null;
  limit: number;
}

const STORED = `b.size_bytes + COALESCE((SELECT sum(d.bytes) FROM bucket_usage_deltas d WHERE d.bucket_id = b.id), 0)
  + COALESCE((SELECT sum(p.size) FROM bucket_upload_parts p WHERE p.bucket_id = b.id), 0)`;
const OWNER_ORDER = "b.owner_kind || ':' || b.owner_id::text";

/** Live buckets holding bytes, in (owner, id) order. */
export async function storedBuckets(q: Queryable, { createdBefore, after, limit }: Page): Promise<MeteredBucketRow[]> {
  return allRows<MeteredBucketRow>(
    q,
    `SELECT * FROM (SELECT b.id, b.owner_kind, b.owner_id, b.account_id, (${STORED})::bigint AS quantity FROM buckets b
      WHERE b.deleted_at IS NULL AND b.created_at < $1
        AND ($2::text IS NULL OR (${OWNER_ORDER}, b.id::text) > ($2, $3))
      ORDER BY ${OWNER_ORDER}, b.id::text) s WHERE quantity > 0 LIMIT $4`,
    [createdBefore, after?.[0] ?? null, after?.[1] ?? null, limit],
  );
}

/** The owner's live buckets with the bytes each holds (empty ones too). */
export async function storedBucketsOf(q: Queryable, owner: Owner): Promise<MeteredBucketRow[]> {
  return allRows<MeteredBucketRow>(
    q,
    `SELECT b.id, b.owner_kind, b.owner_id, b.account_id, (${STORED})::bigint AS quantity FROM buckets b
      WHERE b.deleted_at IS NULL AND b.owner_kind = $1 AND b.owner_id = $2`,
    [owner.kind, owner.id],
  );
}

/** Claims the unclaimed counts of the buckets of one page for the interval ending at `end`, unless already done. */
async function claim(q: Queryable, bucketIds: string[], end: Date): Promise<void> {
  await q.query(
    `UPDATE bucket_requests r SET metered_for = $2 WHERE r.bucket_id = ANY($1::uuid[]) AND r.metered_for IS NULL
        AND r.counted_at < $2
        AND NOT EXISTS (SELECT 1 FROM bucket_requests x WHERE x.bucket_id = r.bucket_id AND x.metered_for = $2)`,
    [bucketIds, end],
  );
}

/**
 * One page of buckets with counts waiting, or claimed for this interval, in (owner, meter id) order: their counts
 * are claimed for the interval ending at `createdBefore` and summed under the bucket's requests meter id.
 */
export async function claimedRequests(
  q: Queryable,
  { createdBefore, after, limit }: Page,
): Promise<MeteredBucketRow[]> {
  const { rows: page } = await q.query<{ id: string }>(
    `SELECT b.id FROM buckets b
      WHERE EXISTS (SELECT 1 FROM bucket_requests r WHERE r.bucket_id = b.id
                      AND (r.metered_for IS NULL OR r.metered_for = $1) AND r.counted_at < $1)
        AND ($2::text IS NULL OR (${OWNER_ORDER}, b.requests_meter_id::text) > ($2, $3))
      ORDER BY ${OWNER_ORDER}, b.requests_meter_id::text LIMIT $4`,
    [createdBefore, after?.[0] ?? null, after?.[1] ?? null, limit],
  );
  if (!page.length) return [];
  const ids = page.map((r) => r.id);
  await claim(q, ids, createdBefore);
  return allRows<MeteredBucketRow>(
    q,
    `SELECT b.requests_meter_id AS id, b.owner_kind, b.owner_id, b.account_id, sum(r.requests)::bigint AS quantity
       FROM buckets b JOIN bucket_requests r ON r.bucket_id = b.id AND r.metered_for = $2
      WHERE b.id = ANY($1::uuid[])
      GROUP BY b.id ORDER BY ${OWNER_ORDER}, b.requests_meter_id::text`,
    [ids, createdBefore],
  );
}

/** Names by bucket id and by requests meter id. */
export async function bucketNames(q: Queryable, ids: string[]): Promise<{ id: string; meter: string; name: string }[]> {
  return allRows<{ id: string; meter: string; name: string }>(
    q,
    "SELECT id, requests_meter_id AS meter, name FROM buckets WHERE id = ANY($1::uuid[]) OR requests_meter_id = ANY($1::uuid[])",
    [ids],
  );
}
