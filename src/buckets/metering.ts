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
import type { Queryable } from "../store/db.js";
import { meteredResource } from "../kernel/metered.js";
import {
  bucketNames,
  claimedRequests,
  storedBuckets,
  storedBucketsOf,
  type MeteredBucketRow,
} from "./metering-repo.js";

export const BUCKET_KIND = "bucket";
export const REQUESTS_KIND = "bucket-requests";
const GIB = 1024 ** 3;

const metered = (r: MeteredBucketRow, kind: string, quantity: number): MeteredResource =>
  meteredResource(r, kind, "standard", quantity);

export function bucketStorageMetering(): MeteringSource {
  return {
    kind: BUCKET_KIND,
    billable: async (q, page) =>
      (await storedBuckets(q, page)).map((r) => metered(r, BUCKET_KIND, Math.ceil(r.quantity / GIB))),
    billableOf: async (q, owner) =>
      (await storedBucketsOf(q, owner))
        .filter((r) => r.quantity > 0)
        .map((r) => metered(r, BUCKET_KIND, Math.ceil(r.quantity / GIB))),
    describe: (q, ids) => names(q, ids),
  };
}

export function bucketRequestMetering(): MeteringSource {
  return {
    kind: REQUESTS_KIND,
    billable: async (q, page) => (await claimedRequests(q, page)).map((r) => metered(r, REQUESTS_KIND, r.quantity)),
    // requests are not a rate: nothing to add to the burn rate
    billableOf: async () => [],
    describe: (q, ids) => names(q, ids),
  };
}

async function names(q: Queryable, ids: string[]): Promise<Map<string, { name: string; slug: string | null }>> {
  const out = new Map<string, { name: string; slug: string | null }>();
  for (const r of await bucketNames(q, ids)) {
    out.set(r.id, { name: r.name, slug: r.name });
    out.set(r.meter, { name: `${r.name} (requests)`, slug: r.name });
  }
  return out;
}
