/**
 * Conformance with @aws-sdk/client-s3, keys and uploads: wrong secret, revoked key, read-only key, a key limited to
 * one bucket, presigned GET/PUT, multipart of 3 × 5 MiB (with and without checksums), ListBuckets.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { call, signup } from "../helpers/app.js";
import { bucketsApp, createBucket, createKey, s3Client, s3Error, type IssuedKey } from "./lib.js";

const MiB = 1024 * 1024;

describe("S3 gateway with the AWS SDK: keys, presigned URLs, multipart", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let user: { token: string };
  let a: { id: string; name: string };
  let b: { id: string; name: string };
  let full: IssuedKey;
  let c: S3Client;

  before(async () => {
    t = await bucketsApp();
    user = await signup(t.app);
    a = await createBucket(t.app, user.token);
    b = await createBucket(t.app, user.token);
    full = await createKey(t.app, user.token, { permission: "read_write" });
    c = s3Client(t.endpoint, full);
    await c.send(new PutObjectCommand({ Bucket: a.name, Key: "in-a", Body: "a" }));
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "in-b", Body: "b" }));
  });
  after(async () => t?.close());

  test("a wrong secret is SignatureDoesNotMatch; an unknown key InvalidAccessKeyId; no signature AccessDenied", async () => {
    const wrong = s3Client(t.endpoint, { accessKeyId: full.accessKeyId, secretAccessKey: full.secretAccessKey + "x" });
    assert.deepEqual(await s3Error(wrong.send(new GetObjectCommand({ Bucket: a.name, Key: "in-a" }))), {
      code: "SignatureDoesNotMatch",
      status: 403,
    });
    assert.equal(
      (await s3Error(wrong.send(new PutObjectCommand({ Bucket: a.name, Key: "w", Body: "x" })))).code,
      "SignatureDoesNotMatch",
    );
    const unknown = s3Client(t.endpoint, { accessKeyId: "PKUNKNOWN0000000000", secretAccessKey: "x" });
    assert.equal((await s3Error(unknown.send(new ListBucketsCommand({})))).code, "InvalidAccessKeyId");
    const anon = await fetch(`${t.endpoint}/${a.name}/in-a`);
    assert.equal(anon.status, 403);
    assert.match(await anon.text(), /<Code>AccessDenied<\/Code>/);
  });

  test("a revoked key is refused from the next request on", async () => {
    const k = await createKey(t.app, user.token, { permission: "read_write" });
    const kc = s3Client(t.endpoint, k);
    await kc.send(new GetObjectCommand({ Bucket: a.name, Key: "in-a" }));
    const res = await call(t.app, { method: "DELETE", url: `/v1/buckets/keys/${k.id}`, token: user.token });
    assert.equal(res.statusCode, 204);
    assert.deepEqual(await s3Error(kc.send(new GetObjectCommand({ Bucket: a.name, Key: "in-a" }))), {
      code: "InvalidAccessKeyId",
      status: 403,
    });
  });

  test("a read key reads but cannot write or delete", async () => {
    const rc = s3Client(t.endpoint, await createKey(t.app, user.token, { permission: "read" }));
    assert.equal(
      await (await rc.send(new GetObjectCommand({ Bucket: a.name, Key: "in-a" }))).Body!.transformToString(),
      "a",
    );
    assert.deepEqual(await s3Error(rc.send(new PutObjectCommand({ Bucket: a.name, Key: "nope", Body: "x" }))), {
      code: "AccessDenied",
      status: 403,
    });
    assert.equal(
      (await s3Error(rc.send(new DeleteObjectCommand({ Bucket: a.name, Key: "in-a" })))).code,
      "AccessDenied",
    );
    assert.equal(
      (await s3Error(rc.send(new CreateMultipartUploadCommand({ Bucket: a.name, Key: "mp" })))).code,
      "AccessDenied",
    );
    await c.send(new HeadObjectCommand({ Bucket: a.name, Key: "in-a" }));
  });

  test("a key for bucket A cannot list or read bucket B, and ListBuckets shows it only A", async () => {
    const ac = s3Client(
      t.endpoint,
      await createKey(t.app, user.token, { permission: "read_write", bucket_ids: [a.id] }),
    );
    const listed = await ac.send(new ListObjectsV2Command({ Bucket: a.name }));
    assert.deepEqual(
      listed.Contents?.map((o) => o.Key),
      ["in-a"],
    );
    assert.deepEqual(await s3Error(ac.send(new ListObjectsV2Command({ Bucket: b.name }))), {
      code: "AccessDenied",
      status: 403,
    });
    assert.equal((await s3Error(ac.send(new GetObjectCommand({ Bucket: b.name, Key: "in-b" })))).code, "AccessDenied");
    assert.deepEqual(
      (await ac.send(new ListBucketsCommand({}))).Buckets?.map((x) => x.Name),
      [a.name],
    );
    assert.deepEqual(
      (await c.send(new ListBucketsCommand({}))).Buckets?.map((x) => x.Name).sort(),
      [a.name, b.name].sort(),
    );
    // another owner's key reaches none of these buckets
    const other = await signup(t.app);
    const oc = s3Client(t.endpoint, await createKey(t.app, other.token, { permission: "read_write" }));
    assert.equal((await s3Error(oc.send(new GetObjectCommand({ Bucket: a.name, Key: "in-a" })))).code, "AccessDenied");
    assert.deepEqual((await oc.send(new ListBucketsCommand({}))).Buckets ?? [], []);
  });

  test("presigned GET and PUT work without the secret; expired or altered URLs are refused", async () => {
    const put = await getSignedUrl(c, new PutObjectCommand({ Bucket: a.name, Key: "presigned.txt" }), {
      expiresIn: 60,
    });
    const up = await fetch(put, { method: "PUT", body: "via presigned PUT" });
    assert.equal(up.status, 200, await up.text());
    const get = await getSignedUrl(c, new GetObjectCommand({ Bucket: a.name, Key: "presigned.txt" }), {
      expiresIn: 60,
    });
    const down = await fetch(get);
    assert.equal(down.status, 200);
    assert.equal(await down.text(), "via presigned PUT");
    const expired = await getSignedUrl(c, new GetObjectCommand({ Bucket: a.name, Key: "presigned.txt" }), {
      expiresIn: 1,
      signingDate: new Date(Date.now() - 60_000),
    });
    const late = await fetch(expired);
    assert.equal(late.status, 403);
    assert.match(await late.text(), /<Code>AccessDenied<\/Code><Message>Request has expired/);
    const altered = await fetch(get.replace("presigned.txt", "in-a"));
    assert.equal(altered.status, 403);
    assert.match(await altered.text(), /SignatureDoesNotMatch/);
  });

  test("multipart: 3 × 5 MiB parts, ListParts, Complete; the object is their concatenation", async () => {
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(5 * MiB)];
    const { UploadId } = await c.send(
      new CreateMultipartUploadCommand({
        Bucket: a.name,
        Key: "big.bin",
        ContentType: "application/x-big",
        Metadata: { m: "1" },
      }),
    );
    const etags: string[] = [];
    for (const [i, body] of parts.entries())
      etags.push(
        (
          await c.send(
            new UploadPartCommand({ Bucket: a.name, Key: "big.bin", UploadId, PartNumber: i + 1, Body: body }),
          )
        ).ETag!,
      );
    const listed = await c.send(new ListPartsCommand({ Bucket: a.name, Key: "big.bin", UploadId }));
    assert.deepEqual(
      listed.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag]),
      etags.map((e, i) => [i + 1, 5 * MiB, e]),
    );
    const done = await c.send(
      new CompleteMultipartUploadCommand({
        Bucket: a.name,
        Key: "big.bin",
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    const md5s = Buffer.concat(parts.map((p) => createHash("md5").update(p).digest()));
    assert.equal(done.ETag, `"${createHash("md5").update(md5s).digest("hex")}-3"`);
    const got = await c.send(new GetObjectCommand({ Bucket: a.name, Key: "big.bin" }));
    assert.equal(got.ContentLength, 15 * MiB);
    assert.equal(got.ContentType, "application/x-big");
    assert.deepEqual(got.Metadata, { m: "1" });
    const bytes = Buffer.from(await got.Body!.transformToByteArray());
    assert.ok(bytes.equals(Buffer.concat(parts)));
    // a range across the boundary of parts 1 and 2
    const across = await c.send(
      new GetObjectCommand({ Bucket: a.name, Key: "big.bin", Range: `bytes=${5 * MiB - 3}-${5 * MiB + 2}` }),
    );
    assert.ok(Buffer.from(await across.Body!.transformToByteArray()).equals(bytes.subarray(5 * MiB - 3, 5 * MiB + 3)));
    assert.equal(
      (await s3Error(c.send(new ListPartsCommand({ Bucket: a.name, Key: "big.bin", UploadId })))).code,
      "NoSuchUpload",
    );
  });

  test("multipart with CRC32 checksums gives a composite checksum; small parts, bad ETags and aborts are refused", async () => {
    const { UploadId } = await c.send(
      new CreateMultipartUploadCommand({ Bucket: a.name, Key: "sum.bin", ChecksumAlgorithm: "CRC32" }),
    );
    const bodies = [randomBytes(5 * MiB), randomBytes(1000)];
    const uploaded = [];
    for (const [i, body] of bodies.entries())
      uploaded.push(
        await c.send(
          new UploadPartCommand({
            Bucket: a.name,
            Key: "sum.bin",
            UploadId,
            PartNumber: i + 1,
            Body: body,
            ChecksumAlgorithm: "CRC32",
          }),
        ),
      );
    assert.ok(uploaded.every((u) => u.ChecksumCRC32));
    const Parts = uploaded.map((u, i) => ({ PartNumber: i + 1, ETag: u.ETag, ChecksumCRC32: u.ChecksumCRC32 }));
    const badEtag = Parts.map((p, i) => (i === 0 ? { ...p, ETag: '"00000000000000000000000000000000"' } : p));
    assert.equal(
      (
        await s3Error(
          c.send(
            new CompleteMultipartUploadCommand({
              Bucket: a.name,
              Key: "sum.bin",
              UploadId,
              MultipartUpload: { Parts: badEtag },
            }),
          ),
        )
      ).code,
      "InvalidPart",
    );
    const done = await c.send(
      new CompleteMultipartUploadCommand({ Bucket: a.name, Key: "sum.bin", UploadId, MultipartUpload: { Parts } }),
    );
    assert.match(done.ChecksumCRC32 ?? "", /-2$/);
    const got = await c.send(new GetObjectCommand({ Bucket: a.name, Key: "sum.bin", ChecksumMode: "ENABLED" }));
    assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat(bodies)));

    const small = await c.send(new CreateMultipartUploadCommand({ Bucket: a.name, Key: "small.bin" }));
    const p1 = await c.send(
      new UploadPartCommand({
        Bucket: a.name,
        Key: "small.bin",
        UploadId: small.UploadId,
        PartNumber: 1,
        Body: "tiny",
      }),
    );
    const p2 = await c.send(
      new UploadPartCommand({
        Bucket: a.name,
        Key: "small.bin",
        UploadId: small.UploadId,
        PartNumber: 2,
        Body: "tiny",
      }),
    );
    const smallParts = [p1, p2].map((p, i) => ({ ETag: p.ETag, PartNumber: i + 1 }));
    assert.equal(
      (
        await s3Error(
          c.send(
            new CompleteMultipartUploadCommand({
              Bucket: a.name,
              Key: "small.bin",
              UploadId: small.UploadId,
              MultipartUpload: { Parts: smallParts },
            }),
          ),
        )
      ).code,
      "EntityTooSmall",
    );
    await c.send(new AbortMultipartUploadCommand({ Bucket: a.name, Key: "small.bin", UploadId: small.UploadId }));
    assert.equal(
      (await s3Error(c.send(new ListPartsCommand({ Bucket: a.name, Key: "small.bin", UploadId: small.UploadId }))))
        .code,
      "NoSuchUpload",
    );
    assert.equal((await s3Error(c.send(new HeadObjectCommand({ Bucket: a.name, Key: "small.bin" })))).status, 404);
  });
});
