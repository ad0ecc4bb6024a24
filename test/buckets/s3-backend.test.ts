/**
 * The s3 storage backend, with the platform's own gateway as the upstream service: platform B authenticates its
 * own keys and keeps its own metadata, and stores the bytes as blobs in a bucket of platform A (the operator's
 * credentials there). Every operation through B works, and A holds exactly B's live blobs.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { signup } from "../helpers/app.js";
import { sweepOrphans } from "../../src/buckets/gateway/upkeep.js";
import { bucketsApp, createBucket, createKey, s3Client, s3Error } from "./lib.js";

const MiB = 1024 * 1024;

describe("buckets: the s3 storage backend over the platform's own gateway", () => {
  let upstream: Awaited<ReturnType<typeof bucketsApp>>;
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let upstreamBucket: string;
  let operator: S3Client;
  let c: S3Client;
  let bucket: string;

  before(async () => {
    upstream = await bucketsApp();
    const op = await signup(upstream.app);
    upstreamBucket = (await createBucket(upstream.app, op.token)).name;
    const opKey = await createKey(upstream.app, op.token, { permission: "read_write" });
    operator = s3Client(upstream.endpoint, opKey);
    t = await bucketsApp({
      env: {
        S3_STORAGE: "s3",
        S3_UPSTREAM_ENDPOINT: upstream.endpoint,
        S3_UPSTREAM_BUCKET: upstreamBucket,
        S3_UPSTREAM_ACCESS_KEY_ID: opKey.accessKeyId,
        S3_UPSTREAM_SECRET_ACCESS_KEY: opKey.secretAccessKey,
        S3_UPSTREAM_PREFIX: "blobs",
      },
    });
    const u = await signup(t.app);
    bucket = (await createBucket(t.app, u.token)).name;
    c = s3Client(t.endpoint, await createKey(t.app, u.token, { permission: "read_write" }));
  });
  after(async () => {
    await t?.close();
    await upstream?.close();
  });

  const upstreamKeys = async () =>
    ((await operator.send(new ListObjectsV2Command({ Bucket: upstreamBucket }))).Contents ?? [])
      .map((o) => o.Key!)
      .sort();
  const blobsOf = async (key: string) =>
    (await t.db.query<{ blobs: string[] }>("SELECT blobs FROM bucket_objects WHERE key = $1", [key])).rows[0]?.blobs ??
    [];

  test("put, get, range, copy, list and delete through B; the bytes live in A under the prefix", async () => {
    await c.send(
      new PutObjectCommand({ Bucket: bucket, Key: "x/one.txt", Body: "stored upstream", Metadata: { k: "v" } }),
    );
    const blobs = await blobsOf("x/one.txt");
    assert.equal(blobs.length, 1);
    assert.deepEqual(await upstreamKeys(), [`blobs/${blobs[0]}`]);
    const got = await c.send(new GetObjectCommand({ Bucket: bucket, Key: "x/one.txt" }));
    assert.equal(await got.Body!.transformToString(), "stored upstream");
    assert.deepEqual(got.Metadata, { k: "v" });
    const part = await c.send(new GetObjectCommand({ Bucket: bucket, Key: "x/one.txt", Range: "bytes=7-14" }));
    assert.equal(await part.Body!.transformToString(), "upstream");
    await c.send(new CopyObjectCommand({ Bucket: bucket, Key: "x/two.txt", CopySource: `${bucket}/x/one.txt` }));
    assert.equal(
      await (await c.send(new GetObjectCommand({ Bucket: bucket, Key: "x/two.txt" }))).Body!.transformToString(),
      "stored upstream",
    );
    const listed = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "x/" }));
    assert.deepEqual(
      listed.Contents?.map((o) => o.Key),
      ["x/one.txt", "x/two.txt"],
    );
    assert.equal((await upstreamKeys()).length, 2);
    await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: "x/one.txt" }));
    await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: "x/two.txt" }));
    assert.equal((await s3Error(c.send(new GetObjectCommand({ Bucket: bucket, Key: "x/one.txt" })))).code, "NoSuchKey");
    // removal upstream follows the commit; give it a moment
    for (let i = 0; i < 50 && (await upstreamKeys()).length; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await upstreamKeys(), []);
  });

  test("a multipart upload through B: parts are upstream blobs, the object reads back whole", async () => {
    const parts = [randomBytes(5 * MiB), randomBytes(MiB)];
    const { UploadId } = await c.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "mp.bin" }));
    const etags = [];
    for (const [i, body] of parts.entries())
      etags.push(
        (
          await c.send(
            new UploadPartCommand({ Bucket: bucket, Key: "mp.bin", UploadId, PartNumber: i + 1, Body: body }),
          )
        ).ETag,
      );
    await c.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: "mp.bin",
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    const bytes = Buffer.from(
      await (await c.send(new GetObjectCommand({ Bucket: bucket, Key: "mp.bin" }))).Body!.transformToByteArray(),
    );
    assert.ok(bytes.equals(Buffer.concat(parts)));
    const across = await c.send(
      new GetObjectCommand({ Bucket: bucket, Key: "mp.bin", Range: `bytes=${5 * MiB - 2}-${5 * MiB + 1}` }),
    );
    assert.ok(Buffer.from(await across.Body!.transformToByteArray()).equals(bytes.subarray(5 * MiB - 2, 5 * MiB + 2)));
    assert.deepEqual(await upstreamKeys(), (await blobsOf("mp.bin")).map((b) => `blobs/${b}`).sort());
  });

  test("B's sweep lists the upstream bucket and removes blobs no row of B names", async () => {
    const stray = randomUUID();
    await operator.send(new PutObjectCommand({ Bucket: upstreamBucket, Key: `blobs/${stray}`, Body: "stray" }));
    await operator.send(
      new PutObjectCommand({ Bucket: upstreamBucket, Key: "not-a-blob.txt", Body: "operator's own" }),
    );
    const later = new Date(Date.now() + 2 * 3600_000);
    assert.equal(await sweepOrphans(t.db, t.s3.store, 3600, later), 1);
    const left = await upstreamKeys();
    assert.ok(!left.includes(`blobs/${stray}`));
    assert.ok(left.includes("not-a-blob.txt"), "only blobs under the prefix are B's");
    assert.equal(left.filter((k) => k.startsWith("blobs/")).length, (await blobsOf("mp.bin")).length);
  });
});
