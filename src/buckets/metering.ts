/**
 * What billing meters of buckets, through the kernel's metering contract (kernel/contracts.ts):
 *
 * - kind `bucket` (storage): every live bucket holding bytes, as `storageGb` = its objects plus the parts of
 *   uploads in progress, in whole GB rounded up; priced per GB-hour (catalog/prices.json).
 * - kind `bucket-requests`: the requests the gateways counted (gateway/upkeep.ts flushes them into
 *   bucket_requests). The contract meters a quantity per interval through `storageGb`, so a bucket's requests of
 *   an interval are reported there as a count, under the bucket's `requests_meter_id` (usage records are unique per
 *   resource id and interval); the catalog's "GB-hour" price of this kind is the price of one request per hour,
 *   12 × the price per request of a 5-minute interval.
 *
 * Requests are claimed for the interval being metered (metered_for = its end) inside the meter's transaction, at
 * the first batch that meets the bucket in that interval; counts arriving later in the interval wait for the next
 * one. A rolled-back batch rolls the claim back with it, so each counted request is billed exactly once.
 */
import type { MeteredResource, MeteringSource } from "../kernel/area.js";
import type { Owner } from "../kernel/owner.js";
import type { Queryable } from "../store/db.js";

export const BUCKET_KIND = "bucket";
export const REQUESTS_KIND = "bucket-requests";
const GIB = 1024 ** 3;

interface Row {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  quantity: number;
}

const metered = (r: Row, kind: string, quantity: number): MeteredResource => ({
  id: r.id,
  owner: { kind: r.owner_kind, id: r.owner_id },
  accountId: r.account_id,
  kind,
  size: "standard",
  storageGb: quantity,
  state: "running",
});

const STORED = `b.size_bytes + COALESCE((SELECT sum(d.bytes) FROM bucket_usage_deltas d WHERE d.bucket_id = b.id), 0)
  + COALESCE((SELECT sum(p.size) FROM bucket_upload_parts p WHERE p.bucket_id = b.id), 0)`;
const OWNER_ORDER = "b.owner_kind || ':' || b.owner_id::text";

export function bucketStorageMetering(): MeteringSource {
  return {
    kind: BUCKET_KIND,
    billable: async (q, { createdBefore, after, limit }) => {
      const { rows } = await q.query<Row>(
        `SELECT * FROM (SELECT b.id, b.owner_kind, b.owner_id, b.account_id, (${STORED})::bigint AS quantity FROM buckets b
          WHERE b.deleted_at IS NULL AND b.created_at < $1
            AND ($2::text IS NULL OR (${OWNER_ORDER}, b.id::text) > ($2, $3))
          ORDER BY ${OWNER_ORDER}, b.id::text) s WHERE quantity > 0 LIMIT $4`,
        [createdBefore, after?.[0] ?? null, after?.[1] ?? null, limit],
      );
      return rows.map((r) => metered(r, BUCKET_KIND, Math.ceil(r.quantity / GIB)));
    },
    billableOf: async (q, owner) => {
      const { rows } = await q.query<Row>(
        `SELECT b.id, b.owner_kind, b.owner_id, b.account_id, (${STORED})::bigint AS quantity FROM buckets b
          WHERE b.deleted_at IS NULL AND b.owner_kind = $1 AND b.owner_id = $2`,
        [owner.kind, owner.id],
      );
      return rows.filter((r) => r.quantity > 0).map((r) => metered(r, BUCKET_KIND, Math.ceil(r.quantity / GIB)));
    },
    describe: (q, ids) => names(q, ids),
  };
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

export function bucketRequestMetering(): MeteringSource {
  return {
    kind: REQUESTS_KIND,
    billable: async (q, { createdBefore, after, limit }) => {
      // the page: buckets with counts waiting, or claimed for this interval, in (owner, meter id) order
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
      const { rows } = await q.query<Row>(
        `SELECT b.requests_meter_id AS id, b.owner_kind, b.owner_id, b.account_id, sum(r.requests)::bigint AS quantity
           FROM buckets b JOIN bucket_requests r ON r.bucket_id = b.id AND r.metered_for = $2
          WHERE b.id = ANY($1::uuid[])
          GROUP BY b.id ORDER BY ${OWNER_ORDER}, b.requests_meter_id::text`,
        [ids, createdBefore],
      );
      return rows.map((r) => metered(r, REQUESTS_KIND, r.quantity));
    },
    // requests are not a rate: nothing to add to the burn rate
    billableOf: async () => [],
    describe: (q, ids) => names(q, ids),
  };
}

async function names(q: Queryable, ids: string[]): Promise<Map<string, { name: string; slug: string | null }>> {
  const { rows } = await q.query<{ id: string; meter: string; name: string }>(
    "SELECT id, requests_meter_id AS meter, name FROM buckets WHERE id = ANY($1::uuid[]) OR requests_meter_id = ANY($1::uuid[])",
    [ids],
  );
  const out = new Map<string, { name: string; slug: string | null }>();
  for (const r of rows) {
    out.set(r.id, { name: r.name, slug: r.name });
    out.set(r.meter, { name: `${r.name} (requests)`, slug: r.name });
  }
  return out;
}
