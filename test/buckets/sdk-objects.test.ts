/**
 * Conformance with @aws-sdk/client-s3, objects: put/get/head/delete, user metadata, Range, conditional reads and
 * writes, Content-MD5 and checksum headers, CopyObject, DeleteObjects, ListObjectsV2 with prefix, delimiter and
 * continuation, and S3's XML errors.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetBucketLocationCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { signup } from "../helpers/app.js";
import { bucketsApp, createBucket, createKey, s3Client, s3Error } from "./lib.js";

describe("S3 gateway with the AWS SDK: objects", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let c: S3Client;
  let bucket: string;

  before(async () => {
    t = await bucketsApp();
    const u = await signup(t.app);
    bucket = (await createBucket(t.app, u.token)).name;
    c = s3Client(t.endpoint, await createKey(t.app, u.token, { permission: "read_write" }));
  });
  after(async () => t?.close());

  const text = async (key: string, extra: Partial<ConstructorParameters<typeof GetObjectCommand>[0]> = {}) =>
    (await c.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...extra }))).Body!.transformToString();

  test("PutObject, HeadObject and GetObject keep content type, headers and user metadata", async () => {
    const put = await c.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: "docs/hello world ü.txt",
        Body: "hello, world",
        ContentType: "text/plain; charset=utf-8",
        CacheControl: "max-age=60",
        ContentDisposition: "attachment",
        Metadata: { owner: "alice", "x-note": "one two" },
      }),
    );
    assert.equal(put.ETag, `"${createHash("md5").update("hello, world").digest("hex")}"`);
    const head = await c.send(new HeadObjectCommand({ Bucket: bucket, Key: "docs/hello world ü.txt" }));
    assert.equal(head.ContentLength, 12);
    assert.equal(head.ContentType, "text/plain; charset=utf-8");
    assert.equal(head.CacheControl, "max-age=60");
    assert.equal(head.ContentDisposition, "attachment");
    assert.deepEqual(head.Metadata, { owner: "alice", "x-note": "one two" });
    assert.equal(head.ETag, put.ETag);
    assert.ok(head.LastModified instanceof Date);
    assert.equal(await text("docs/hello world ü.txt"), "hello, world");
  });

  test("a missing key is NoSuchKey (404), a missing bucket NoSuchBucket", async () => {
    assert.deepEqual(await s3Error(c.send(new GetObjectCommand({ Bucket: bucket, Key: "nope" }))), {
      code: "NoSuchKey",
      status: 404,
    });
    assert.equal((await s3Error(c.send(new HeadObjectCommand({ Bucket: bucket, Key: "nope" })))).status, 404);
    assert.equal(
      (await s3Error(c.send(new GetObjectCommand({ Bucket: "no-such-bucket-xyz", Key: "a" })))).code,
      "NoSuchBucket",
    );
  });

  test("Range: first bytes, a suffix, an open end; past the end is InvalidRange (416)", async () => {
    await c.send(new PutObjectCommand({ Bucket: bucket, Key: "range", Body: "0123456789" }));
    const part = await c.send(new GetObjectCommand({ Bucket: bucket, Key: "range", Range: "bytes=2-5" }));
    assert.equal(await part.Body!.transformToString(), "2345");
    assert.equal(part.ContentRange, "bytes 2-5/10");
    assert.equal(part.$metadata.httpStatusCode, 206);
    assert.equal(await text("range", { Range: "bytes=-3" }), "789");
    assert.equal(await text("range", { Range: "bytes=7-" }), "789");
    assert.equal(await text("range", { Range: "bytes=8-100" }), "89");
    assert.deepEqual(
      await s3Error(c.send(new GetObjectCommand({ Bucket: bucket, Key: "range", Range: "bytes=10-12" }))),
      {
        code: "InvalidRange",
        status: 416,
      },
    );
  });

  test("If-Match and If-None-Match on reads; If-None-Match: * and If-Match on writes", async () => {
    const { ETag } = await c.send(new PutObjectCommand({ Bucket: bucket, Key: "cond", Body: "v1" }));
    assert.equal(await text("cond", { IfMatch: ETag }), "v1");
    assert.equal(
      (await s3Error(c.send(new GetObjectCommand({ Bucket: bucket, Key: "cond", IfMatch: '"0000"' })))).status,
      412,
    );
    assert.equal(
      (await s3Error(c.send(new GetObjectCommand({ Bucket: bucket, Key: "cond", IfNoneMatch: ETag })))).status,
      304,
    );
    assert.equal(await text("cond", { IfNoneMatch: '"0000"' }), "v1");
    // create-only write: refused while the key exists, accepted for a new key
    assert.deepEqual(
      await s3Error(c.send(new PutObjectCommand({ Bucket: bucket, Key: "cond", Body: "v2", IfNoneMatch: "*" }))),
      {
        code: "PreconditionFailed",
        status: 412,
      },
    );
    await c.send(new PutObjectCommand({ Bucket: bucket, Key: "cond-new", Body: "n", IfNoneMatch: "*" }));
    // compare-and-swap
    assert.equal(
      (await s3Error(c.send(new PutObjectCommand({ Bucket: bucket, Key: "cond", Body: "v2", IfMatch: '"0000"' }))))
        .status,
      412,
    );
    await c.send(new PutObjectCommand({ Bucket: bucket, Key: "cond", Body: "v2", IfMatch: ETag }));
    assert.equal(await text("cond"), "v2");
  });

  test("Content-MD5 and x-amz-checksum-* are verified: a wrong one is BadDigest and stores nothing", async () => {
    const body = "checked bytes";
    const md5 = createHash("md5").update(body).digest("base64");
    await c.send(new PutObjectCommand({ Bucket: bucket, Key: "md5", Body: body, ContentMD5: md5 }));
    const wrongMd5 = createHash("md5").update("other").digest("base64");
    assert.deepEqual(
      await s3Error(c.send(new PutObjectCommand({ Bucket: bucket, Key: "md5-bad", Body: body, ContentMD5: wrongMd5 }))),
      {
        code: "BadDigest",
        status: 400,
      },
    );
    const sha = createHash("sha256").update(body).digest("base64");
    const put = await c.send(new PutObjectCommand({ Bucket: bucket, Key: "sha", Body: body, ChecksumSHA256: sha }));
    assert.equal(put.ChecksumSHA256, sha);
    for (const algorithm of ["CRC32", "CRC32C", "SHA1"] as const)
      await c.send(
        new PutObjectCommand({ Bucket: bucket, Key: `sum-${algorithm}`, Body: body, ChecksumAlgorithm: algorithm }),
      );
    assert.equal(
      (
        await s3Error(
          c.send(new PutObjectCommand({ Bucket: bucket, Key: "crc-bad", Body: body, ChecksumCRC32: "AAAAAA==" })),
        )
      ).code,
      "BadDigest",
    );
    assert.equal((await s3Error(c.send(new HeadObjectCommand({ Bucket: bucket, Key: "md5-bad" })))).status, 404);
    assert.equal((await s3Error(c.send(new HeadObjectCommand({ Bucket: bucket, Key: "crc-bad" })))).status, 404);
    // the stored checksum comes back with checksum mode, and the SDK validates the body against it
    const got = await c.send(new GetObjectCommand({ Bucket: bucket, Key: "sha", ChecksumMode: "ENABLED" }));
    assert.equal(got.ChecksumSHA256, sha);
    assert.equal(await got.Body!.transformToString(), body);
  });

  test("a streamed body of known length (aws-chunked with a CRC32 trailer) is decoded and checked", async () => {
    const data = Buffer.alloc(300_000, 7);
    await c.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: "streamed",
        Body: Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]),
        ContentLength: data.length,
      }),
    );
    const got = await c.send(new GetObjectCommand({ Bucket: bucket, Key: "streamed" }));
    assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(data));
  });

  test("CopyObject keeps or replaces metadata; copying onto itself unchanged is InvalidRequest", async () => {
    await c.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: "src",
        Body: "copy me",
        ContentType: "text/x-a",
        Metadata: { a: "1" },
      }),
    );
    const copied = await c.send(new CopyObjectCommand({ Bucket: bucket, Key: "dst", CopySource: `${bucket}/src` }));
    assert.equal(copied.CopyObjectResult?.ETag, `"${createHash("md5").update("copy me").digest("hex")}"`);
    const head = await c.send(new HeadObjectCommand({ Bucket: bucket, Key: "dst" }));
    assert.equal(head.ContentType, "text/x-a");
    assert.deepEqual(head.Metadata, { a: "1" });
    await c.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: "dst2",
        CopySource: `${bucket}/src`,
        MetadataDirective: "REPLACE",
        ContentType: "text/x-b",
        Metadata: { b: "2" },
      }),
    );
    const head2 = await c.send(new HeadObjectCommand({ Bucket: bucket, Key: "dst2" }));
    assert.equal(head2.ContentType, "text/x-b");
    assert.deepEqual(head2.Metadata, { b: "2" });
    assert.equal(await text("dst2"), "copy me");
    // the copy is its own object: deleting the source leaves it
    await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: "src" }));
    assert.equal(await text("dst"), "copy me");
    assert.equal(
      (await s3Error(c.send(new CopyObjectCommand({ Bucket: bucket, Key: "dst", CopySource: `${bucket}/dst` })))).code,
      "InvalidRequest",
    );
    assert.equal(
      (await s3Error(c.send(new CopyObjectCommand({ Bucket: bucket, Key: "x", CopySource: `${bucket}/gone` })))).code,
      "NoSuchKey",
    );
  });

  test("ListObjectsV2: prefix, delimiter and continuation tokens walk every key once", async () => {
    const keys = ["l/a/1", "l/a/2", "l/b/1", "l/c", "l/d/x/y", "l/e", "l/f"];
    for (const key of keys) await c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
    const top = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "l/", Delimiter: "/" }));
    assert.deepEqual(
      top.CommonPrefixes?.map((p) => p.Prefix),
      ["l/a/", "l/b/", "l/d/"],
    );
    assert.deepEqual(
      top.Contents?.map((o) => o.Key),
      ["l/c", "l/e", "l/f"],
    );
    assert.equal(top.KeyCount, 6);
    const sub = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "l/a/" }));
    assert.deepEqual(
      sub.Contents?.map((o) => [o.Key, o.Size]),
      [
        ["l/a/1", 5],
        ["l/a/2", 5],
      ],
    );
    // pages of two, with and without the delimiter
    for (const delimiter of [undefined, "/"]) {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await c.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: "l/",
            Delimiter: delimiter,
            MaxKeys: 2,
            ContinuationToken: token,
          }),
        );
        seen.push(...(page.Contents ?? []).map((o) => o.Key!), ...(page.CommonPrefixes ?? []).map((p) => p.Prefix!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
        pages++;
      } while (token);
      const expected = delimiter ? ["l/a/", "l/b/", "l/c", "l/d/", "l/e", "l/f"] : keys;
      assert.deepEqual([...seen].sort(), [...expected].sort());
      assert.equal(pages, Math.ceil(expected.length / 2));
    }
    const after = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "l/", StartAfter: "l/d/x/y" }));
    assert.deepEqual(
      after.Contents?.map((o) => o.Key),
      ["l/e", "l/f"],
    );
  });

  test("DeleteObjects deletes a batch and reports each key; deleting a missing key is no error", async () => {
    for (const key of ["del/1", "del/2", "del/3"])
      await c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
    const res = await c.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: [{ Key: "del/1" }, { Key: "del/2" }, { Key: "del/3" }, { Key: "never" }] },
      }),
    );
    assert.deepEqual(res.Deleted?.map((d) => d.Key).sort(), ["del/1", "del/2", "del/3", "never"]);
    const left = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "del/" }));
    assert.deepEqual(left.Contents ?? [], []);
    await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: "never" }));
  });
  test("HeadBucket, GetBucketLocation, ListObjects V1 with markers, url encoding, ListMultipartUploads", async () => {
    assert.equal((await c.send(new HeadBucketCommand({ Bucket: bucket }))).$metadata.httpStatusCode, 200);
    assert.equal((await s3Error(c.send(new HeadBucketCommand({ Bucket: "no-such-bucket-xyz" })))).status, 404);
    assert.ok(!(await c.send(new GetBucketLocationCommand({ Bucket: bucket }))).LocationConstraint);
    for (const key of ["v1/a", "v1/b c", "v1/d/e"])
      await c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" }));
    const page1 = await c.send(new ListObjectsCommand({ Bucket: bucket, Prefix: "v1/", MaxKeys: 2 }));
    assert.deepEqual(
      page1.Contents?.map((o) => o.Key),
      ["v1/a", "v1/b c"],
    );
    assert.equal(page1.IsTruncated, true);
    const page2 = await c.send(new ListObjectsCommand({ Bucket: bucket, Prefix: "v1/", Marker: "v1/b c" }));
    assert.deepEqual(
      page2.Contents?.map((o) => o.Key),
      ["v1/d/e"],
    );
    const grouped = await c.send(new ListObjectsCommand({ Bucket: bucket, Prefix: "v1/", Delimiter: "/" }));
    assert.deepEqual(
      grouped.CommonPrefixes?.map((p) => p.Prefix),
      ["v1/d/"],
    );
    const encoded = await c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "v1/b", EncodingType: "url" }));
    assert.deepEqual(
      encoded.Contents?.map((o) => o.Key),
      ["v1/b%20c"],
    );
    const { UploadId } = await c.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "pending/upload" }));
    const uploads = await c.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: "pending/" }));
    assert.deepEqual(
      uploads.Uploads?.map((u) => [u.Key, u.UploadId]),
      [["pending/upload", UploadId]],
    );
  });
});
