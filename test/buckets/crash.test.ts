/**
 * Durability of the filesystem backend: kill -9 of a gateway process in the middle of an upload leaves no object
 * and, once that host's gateway started again, no bytes on disk; a blob no row names (a crash between writing it
 * and committing its row) is swept once older than the grace period.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import {
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { signup, TEST_SECRET_KEY } from "../helpers/app.js";
import { FilesystemBlobStore } from "../../src/buckets/storage/filesystem.js";
import { sweepOrphans } from "../../src/buckets/gateway/upkeep.js";
import { expireUploads } from "../../src/buckets/gateway/repo.js";
import { bucketsApp, createBucket, createKey, s3Client, s3Error, signRequest, type IssuedKey } from "./lib.js";

const MiB = 1024 * 1024;

describe("buckets: crash safety of the filesystem backend", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let key: IssuedKey;
  let bucket: string;
  const dir = path.resolve(`.test-data/s3-crash-${process.pid}-${Date.now()}`);
  const storageDir = path.join(dir, "objects");
  let child: ChildProcess | null = null;

  before(async () => {
    t = await bucketsApp();
    const u = await signup(t.app);
    bucket = (await createBucket(t.app, u.token)).name;
    key = await createKey(t.app, u.token, { permission: "read_write" });
    await mkdir(dir, { recursive: true });
  });
  after(async () => {
    child?.kill("SIGKILL");
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A gateway of its own (ROLES=s3) over the test's store, data directory `dir` (the same host every start). */
  async function startChild(objects = storageDir): Promise<number> {
    const p = spawn(process.execPath, ["--import", "tsx", "test/buckets/gateway-child.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: t.url,
        DATA_DIR: dir,
        S3_STORAGE_DIR: objects,
        S3_PORT: "0",
        ROLES: "s3",
        PLATFORM_SECRET_KEY: TEST_SECRET_KEY,
        LOG_LEVEL: "silent",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    child = p;
    const lines = createInterface({ input: p.stdout! });
    for await (const line of lines) {
      if (line.startsWith("{")) return (JSON.parse(line) as { port: number }).port;
    }
    throw new Error("the gateway process ended before listening");
  }

  async function tempFiles(): Promise<{ name: string; size: number }[]> {
    const root = path.join(storageDir, "tmp");
    const out: { name: string; size: number }[] = [];
    for (const host of await readdir(root).catch(() => [] as string[]))
      for (const name of await readdir(path.join(root, host)).catch(() => [] as string[]))
        out.push({ name, size: (await stat(path.join(root, host, name))).size });
    return out;
  }

  test("kill -9 mid-upload: no object, and the partial bytes are gone after the restart", async () => {
    const port = await startChild();
    const host = `127.0.0.1:${port}`;
    const size = 64 * MiB;
    const headers = await signRequest(key, {
      method: "PUT",
      host,
      path: `/${bucket}/killed.bin`,
      headers: { "content-length": String(size) },
    });
    const req = http.request({ host: "127.0.0.1", port, method: "PUT", path: `/${bucket}/killed.bin`, headers });
    req.on("error", () => {}); // the server dies under it
    const piece = Buffer.alloc(MiB, 9);
    for (let i = 0; i < 8; i++) req.write(piece);
    // wait until the gateway has written part of it to its temp file
    const deadline = Date.now() + 20_000;
    while (!(await tempFiles()).some((f) => f.size > 0)) {
      assert.ok(Date.now() < deadline, "no temp file appeared");
      await new Promise((r) => setTimeout(r, 50));
    }
    child!.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    req.destroy();
    assert.ok((await tempFiles()).length > 0, "the partial upload is on disk until the restart");
    const c = s3Client(t.endpoint, key);
    assert.equal((await s3Error(c.send(new HeadObjectCommand({ Bucket: bucket, Key: "killed.bin" })))).status, 404);

    // the same host starts again: its temp files go, nothing else is held
    const again = await startChild();
    assert.deepEqual(await tempFiles(), []);
    const store = new FilesystemBlobStore(storageDir, "unused");
    assert.equal(await store.usedBytes(), 0);
    const c2 = s3Client(`http://127.0.0.1:${again}`, key);
    await c2.send(new PutObjectCommand({ Bucket: bucket, Key: "after.bin", Body: Buffer.alloc(MiB, 1) }));
    assert.equal(await store.usedBytes(), MiB);
    assert.equal((await c2.send(new HeadObjectCommand({ Bucket: bucket, Key: "after.bin" }))).ContentLength, MiB);
    child!.kill("SIGKILL");
    child = null;
  });

  test("two gateway processes over one store and one storage directory serve the same objects", async () => {
    const port = await startChild(t.s3.config.storageDir);
    const other = s3Client(`http://127.0.0.1:${port}`, key);
    const here = s3Client(t.endpoint, key);
    await other.send(new PutObjectCommand({ Bucket: bucket, Key: "shared.txt", Body: "written there" }));
    assert.equal(
      await (await here.send(new GetObjectCommand({ Bucket: bucket, Key: "shared.txt" }))).Body!.transformToString(),
      "written there",
    );
    await here.send(new PutObjectCommand({ Bucket: bucket, Key: "shared.txt", Body: "replaced here" }));
    assert.equal(
      await (await other.send(new GetObjectCommand({ Bucket: bucket, Key: "shared.txt" }))).Body!.transformToString(),
      "replaced here",
    );
    await other.send(new DeleteObjectCommand({ Bucket: bucket, Key: "shared.txt" }));
    assert.equal((await s3Error(here.send(new HeadObjectCommand({ Bucket: bucket, Key: "shared.txt" })))).status, 404);
    child!.kill("SIGKILL");
    child = null;
  });

  test("the sweep removes blobs no row names once older than the grace period, and keeps the rest", async () => {
    const store = t.s3.store as FilesystemBlobStore;
    const c = s3Client(t.endpoint, key);
    await c.send(new PutObjectCommand({ Bucket: bucket, Key: "kept", Body: "kept" }));
    const orphan = randomUUID();
    const young = randomUUID();
    for (const id of [orphan, young]) {
      await mkdir(path.dirname(store.blobPath(id)), { recursive: true });
      await writeFile(store.blobPath(id), "left behind by a crash");
    }
    const old = new Date(Date.now() - 2 * 3600_000);
    await utimes(store.blobPath(orphan), old, old);
    // every blob of the test app is old to a sweep that runs two hours from now, but rows still name "kept"'s
    assert.equal(await sweepOrphans(t.db, store, 3600), 1);
    assert.ok(!existsSync(store.blobPath(orphan)));
    assert.ok(existsSync(store.blobPath(young)), "a young blob may be an upload about to commit");
    // (a blob the other gateway's delete left to the sweep when it was killed may go too)
    assert.ok((await sweepOrphans(t.db, store, 3600, new Date(Date.now() + 2 * 3600_000))) >= 1);
    assert.ok(!existsSync(store.blobPath(young)));
    assert.equal((await c.send(new HeadObjectCommand({ Bucket: bucket, Key: "kept" }))).ContentLength, 4);
  });
  test("a multipart upload left unfinished is aborted after the expiry, and its parts' bytes swept", async () => {
    const store = t.s3.store as FilesystemBlobStore;
    const c = s3Client(t.endpoint, key);
    const { UploadId } = await c.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "forgotten" }));
    await c.send(
      new UploadPartCommand({ Bucket: bucket, Key: "forgotten", UploadId, PartNumber: 1, Body: Buffer.alloc(5000) }),
    );
    const { rows } = await t.db.query<{ blob: string }>("SELECT blob FROM bucket_upload_parts WHERE upload_id = $1", [
      UploadId,
    ]);
    assert.equal(await expireUploads(t.db, 7), 0);
    await t.db.query("UPDATE bucket_uploads SET created_at = now() - interval '8 days' WHERE id = $1", [UploadId]);
    assert.equal(await expireUploads(t.db, 7), 1);
    await sweepOrphans(t.db, store, 3600, new Date(Date.now() + 2 * 3600_000));
    assert.ok(!existsSync(store.blobPath(rows[0].blob)));
    assert.equal(
      (await s3Error(c.send(new ListPartsCommand({ Bucket: bucket, Key: "forgotten", UploadId })))).code,
      "NoSuchUpload",
    );
  });
});
