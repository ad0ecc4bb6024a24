/**
 * Bucket metering through the area's metering sources: stored GB-hours (kind bucket, whole GB rounded up) and the
 * requests the gateway counted (kind bucket-requests), each billed exactly once into the ledger.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { intervalStartOf, meterInterval } from "../../src/billing/metering/meter.js";
import { prices } from "../../src/billing/catalog.js";
import { call, signup } from "../helpers/app.js";
import { bucketsApp, createBucket, createKey, s3Client } from "./lib.js";

describe("bucket metering", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;

  before(async () => {
    t = await bucketsApp();
  });
  after(async () => t?.close());

  const records = async (kind: string) =>
    (
      await t.db.query<{ resource_id: string; storage_gb: number; storage_micro: number; interval_start: Date }>(
        "SELECT resource_id, storage_gb, storage_micro, interval_start FROM usage_records WHERE resource_kind = $1 ORDER BY interval_start",
        [kind],
      )
    ).rows;

  test("storage is metered per GB (rounded up) and requests by count, once per interval", async () => {
    const u = await signup(t.app);
    const b = await createBucket(t.app, u.token);
    const empty = await createBucket(t.app, u.token);
    const c = s3Client(t.endpoint, await createKey(t.app, u.token, { permission: "read_write" }));
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "a", Body: Buffer.alloc(3000) }));
    for (let i = 0; i < 4; i++) await c.send(new GetObjectCommand({ Bucket: b.name, Key: "a" }));
    await t.s3.counter.flush();

    const catalog = prices();
    const now = intervalStartOf(new Date(), catalog);
    const sources = t.platform.kernel.metering;
    await meterInterval(t.db, sources, now);
    await meterInterval(t.db, sources, now); // a second run in the same interval bills nothing again

    const storage = await records("bucket");
    assert.deepEqual(
      storage.map((r) => [r.resource_id, r.storage_gb]),
      [[b.id, 1]],
      "the empty bucket is not billed",
    );
    const perGbInterval =
      (catalog.resources.bucket.sizes.standard.storage_microkrw_per_gb_hour * catalog.meter_interval_seconds) / 3600;
    assert.equal(storage[0].storage_micro, perGbInterval);
    const { rows } = await t.db.query<{ requests_meter_id: string }>(
      "SELECT requests_meter_id FROM buckets WHERE id = $1",
      [b.id],
    );
    const requests = await records("bucket-requests");
    assert.deepEqual(
      requests.map((r) => [r.resource_id, r.storage_gb]),
      [[rows[0].requests_meter_id, 5]],
      "one PUT and four GETs",
    );
    assert.ok(!requests.some((r) => r.resource_id === empty.id));

    // requests after this interval's claim wait for the next interval, and are billed there once
    await c.send(new GetObjectCommand({ Bucket: b.name, Key: "a" }));
    await t.s3.counter.flush();
    await meterInterval(t.db, sources, now);
    assert.equal((await records("bucket-requests")).length, 1);
    const next = new Date(now.getTime() + catalog.meter_interval_seconds * 1000);
    await meterInterval(t.db, sources, next);
    await meterInterval(t.db, sources, next);
    assert.deepEqual(
      (await records("bucket-requests")).map((r) => r.storage_gb),
      [5, 1],
    );
    // the burn rate counts the stored GB (requests are no rate); usage reports name both kinds by the bucket
    const balance = (await call(t.app, { url: "/v1/billing/balance", token: u.token })).json();
    assert.equal(
      balance.burn_rate_microkrw_per_hour,
      catalog.resources.bucket.sizes.standard.storage_microkrw_per_gb_hour,
    );
    for (const source of sources.filter((s) => s.kind.startsWith("bucket"))) {
      const names = await source.describe!(t.db, [b.id, rows[0].requests_meter_id]);
      assert.equal(names.get(b.id)?.name, b.name);
      assert.equal(names.get(rows[0].requests_meter_id)?.name, `${b.name} (requests)`);
    }
  });
});
