/** A second, independent S3 client against the gateway: the minio JS client (its own signer, its own XML). */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import * as Minio from "minio";
import { signup } from "../helpers/app.js";
import { bucketsApp, createBucket, createKey } from "./lib.js";

async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function collect<T>(stream: NodeJS.ReadableStream): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item as T);
  return items;
}

describe("S3 gateway with the minio client", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let mc: Minio.Client;
  let bucket: string;
  let other: string;

  before(async () => {
    // this client's uploads are hashed on a worker thread (the default on machines of 4 cores and more)
    t = await bucketsApp({ env: { S3_DIGEST_WORKERS: "1" } });
    const u = await signup(t.app);
    bucket = (await createBucket(t.app, u.token)).name;
    other = (await createBucket(t.app, u.token)).name;
    const key = await createKey(t.app, u.token, { permission: "read_write" });
    mc = new Minio.Client({
      endPoint: "127.0.0.1",
      port: t.s3.gateway.address!.port,
      useSSL: false,
      accessKey: key.accessKeyId,
      secretKey: key.secretAccessKey,
      pathStyle: true,
      region: "us-east-1",
      partSize: 5 * 1024 * 1024,
    });
  });
  after(async () => t?.close());

  test("bucketExists, listBuckets", async () => {
    assert.equal(await mc.bucketExists(bucket), true);
    assert.deepEqual((await mc.listBuckets()).map((b) => b.name).sort(), [bucket, other].sort());
  });

  test("putObject, statObject with metadata, getObject, getPartialObject", async () => {
    const up = await mc.putObject(bucket, "dir/a.txt", "hello from minio", undefined, {
      "Content-Type": "text/plain",
      "X-Amz-Meta-Color": "blue",
    });
    assert.ok(up.etag);
    const st = await mc.statObject(bucket, "dir/a.txt");
    assert.equal(st.size, 16);
    assert.equal(st.metaData["content-type"], "text/plain");
    assert.equal(st.metaData.color, "blue");
    assert.equal((await drain(await mc.getObject(bucket, "dir/a.txt"))).toString(), "hello from minio");
    assert.equal((await drain(await mc.getPartialObject(bucket, "dir/a.txt", 6, 4))).toString(), "from");
  });

  test("a 12 MiB stream goes up as a multipart upload and comes back whole", async () => {
    const data = randomBytes(12 * 1024 * 1024);
    await mc.putObject(
      bucket,
      "big/stream.bin",
      Readable.from([data.subarray(0, 7_000_000), data.subarray(7_000_000)]),
      data.length,
    );
    const st = await mc.statObject(bucket, "big/stream.bin");
    assert.equal(st.size, data.length);
    assert.match(st.etag, /-[2-9]$/); // a multipart object
    assert.ok((await drain(await mc.getObject(bucket, "big/stream.bin"))).equals(data));
  });

  test("listObjectsV2 with and without recursion; copyObject; removeObjects", async () => {
    for (const k of ["list/1", "list/2", "list/sub/3"]) await mc.putObject(bucket, k, k);
    const flat = await collect<{ name?: string; prefix?: string }>(mc.listObjectsV2(bucket, "list/", false));
    assert.deepEqual(flat.map((i) => i.name ?? i.prefix).sort(), ["list/1", "list/2", "list/sub/"]);
    const deep = await collect<{ name?: string }>(mc.listObjectsV2(bucket, "list/", true));
    assert.deepEqual(deep.map((i) => i.name).sort(), ["list/1", "list/2", "list/sub/3"]);
    await mc.copyObject(other, "copied", `/${bucket}/list/1`);
    assert.equal((await drain(await mc.getObject(other, "copied"))).toString(), "list/1");
    await mc.removeObjects(bucket, ["list/1", "list/2", "list/sub/3"]);
    assert.deepEqual(await collect(mc.listObjectsV2(bucket, "list/", true)), []);
  });

  test("presigned GET and PUT URLs from the minio client", async () => {
    const put = await mc.presignedPutObject(bucket, "presigned/m.txt", 60);
    assert.equal((await fetch(put, { method: "PUT", body: "minio presigned" })).status, 200);
    const get = await mc.presignedGetObject(bucket, "presigned/m.txt", 60);
    const res = await fetch(get);
    assert.equal(await res.text(), "minio presigned");
  });

  test("removeObject, then statObject is NotFound", async () => {
    await mc.removeObject(bucket, "dir/a.txt");
    await assert.rejects(mc.statObject(bucket, "dir/a.txt"), (err: { code?: string }) => err.code === "NotFound");
    await assert.rejects(mc.getObject(bucket, "dir/a.txt"), (err: { code?: string }) => err.code === "NoSuchKey");
  });
});
