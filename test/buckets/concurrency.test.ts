/**
 * Concurrent writers: the bucket's size and count stay exact under parallel puts, replacements and deletes of the
 * same keys (before and after the deltas are folded), and a force delete racing with uploads leaves no object rows
 * and no bytes behind.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { call, signup } from "../helpers/app.js";
import { foldUsageDeltas } from "../../src/buckets/gateway/repo.js";
import type { FilesystemBlobStore } from "../../src/buckets/storage/filesystem.js";
import { bucketsApp, createBucket, createKey, s3Client } from "./lib.js";

describe("buckets: concurrent writers", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let user: { token: string };
  let c: S3Client;

  before(async () => {
    t = await bucketsApp();
    user = await signup(t.app);
    c = s3Client(t.endpoint, await createKey(t.app, user.token, { permission: "read_write" }));
  });
  after(async () => t?.close());

  const actual = async (bucketId: string) =>
    (
      await t.db.query<{ bytes: number; count: number }>(
        "SELECT COALESCE(sum(size), 0)::bigint AS bytes, count(*)::int AS count FROM bucket_objects WHERE bucket_id = $1",
        [bucketId],
      )
    ).rows[0];
  const shown = async (bucketId: string) => {
    const b = (await call(t.app, { url: `/v1/buckets/${bucketId}`, token: user.token })).json();
    return { bytes: b.size_bytes, count: b.object_count };
  };

  test("parallel puts, replacements and deletes of the same keys keep size and count exact", async () => {
    const b = await createBucket(t.app, user.token);
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      const key = `k${i % 7}`;
      ops.push(
        i % 5 === 4
          ? c.send(new DeleteObjectCommand({ Bucket: b.name, Key: key }))
          : c.send(new PutObjectCommand({ Bucket: b.name, Key: key, Body: Buffer.alloc(100 + i * 13) })),
      );
    }
    await Promise.all(ops);
    const truth = await actual(b.id);
    assert.deepEqual(await shown(b.id), truth);
    await foldUsageDeltas(t.db);
    assert.deepEqual(await shown(b.id), truth);
    const { rows } = await t.db.query("SELECT count(*)::int AS n FROM bucket_usage_deltas WHERE bucket_id = $1", [
      b.id,
    ]);
    assert.equal(rows[0].n, 0);
  });

  test("a force delete racing with uploads leaves no rows and no bytes", async () => {
    const b = await createBucket(t.app, user.token);
    const store = t.s3.store as FilesystemBlobStore;
    for (let i = 0; i < 5; i++)
      await c.send(new PutObjectCommand({ Bucket: b.name, Key: `pre${i}`, Body: Buffer.alloc(1000) }));
    const before = await store.usedBytes();
    const uploads = Array.from({ length: 20 }, (_, i) =>
      c.send(new PutObjectCommand({ Bucket: b.name, Key: `race${i}`, Body: Buffer.alloc(2000 + i) })).then(
        () => "stored",
        (err: { name: string }) => err.name,
      ),
    );
    await new Promise((r) => setTimeout(r, 5));
    const del = await call(t.app, { method: "DELETE", url: `/v1/buckets/${b.id}?force=1`, token: user.token });
    assert.equal(del.statusCode, 204);
    const outcomes = await Promise.all(uploads);
    assert.ok(
      outcomes.every((o) => o === "stored" || o === "NoSuchBucket"),
      outcomes.join(","),
    );
    assert.deepEqual(await actual(b.id), { bytes: 0, count: 0 });
    // removals after the commits are asynchronous: wait for the bytes to go
    for (let i = 0; i < 50 && (await store.usedBytes()) > before - 5000; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(await store.usedBytes(), before - 5000);
  });
});
