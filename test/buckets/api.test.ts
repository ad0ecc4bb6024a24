/** The buckets API: create (S3 naming, unique platform-wide), list, detail with sizes, delete (force), keys, scopes. */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { CreateMultipartUploadCommand, PutObjectCommand, UploadPartCommand } from "@aws-sdk/client-s3";
import { call, expectError, scopedKey, signup } from "../helpers/app.js";
import type { FilesystemBlobStore } from "../../src/buckets/storage/filesystem.js";
import { bucketsApp, createBucket, createKey, s3Client, s3Error, uniqueName } from "./lib.js";

describe("buckets API", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  let alice: { token: string };
  let bob: { token: string };

  before(async () => {
    t = await bucketsApp();
    alice = await signup(t.app);
    bob = await signup(t.app);
  });
  after(async () => t?.close());

  test("create answers 201 with the S3 endpoint, region and size; names follow S3 rules", async () => {
    const name = uniqueName("photos");
    const res = await call(t.app, { method: "POST", url: "/v1/buckets", token: alice.token, body: { name } });
    assert.equal(res.statusCode, 201, res.body);
    const b = res.json();
    assert.equal(b.name, name);
    assert.equal(b.endpoint, t.endpoint);
    assert.match(b.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(b.virtual_host, `http://${name}.s3.localhost:${new URL(t.endpoint).port}`);
    assert.equal(b.region, "us-east-1");
    assert.equal(b.size_bytes, 0);
    assert.equal(b.object_count, 0);
    for (const bad of [
      "ab",
      "Upper-case",
      "a..b",
      "-dash",
      "dash-",
      "192.168.1.1",
      "xn--punycode",
      "x".repeat(64),
      "under_score",
    ]) {
      expectError(
        await call(t.app, { method: "POST", url: "/v1/buckets", token: alice.token, body: { name: bad } }),
        400,
        "invalid_request",
      );
    }
    const dotted = await call(t.app, {
      method: "POST",
      url: "/v1/buckets",
      token: alice.token,
      body: { name: `${uniqueName()}.with.dots` },
    });
    assert.equal(dotted.statusCode, 201);
  });

  test("a name is unique platform-wide: taken by another owner is 409; free again once deleted", async () => {
    const name = uniqueName("shared");
    await createBucket(t.app, alice.token, name);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/buckets", token: bob.token, body: { name } }),
      409,
      "slug_taken",
    );
    expectError(
      await call(t.app, { method: "POST", url: "/v1/buckets", token: alice.token, body: { name } }),
      409,
      "slug_taken",
    );
    assert.equal(
      (await call(t.app, { method: "DELETE", url: `/v1/buckets/${name}`, token: alice.token })).statusCode,
      204,
    );
    await createBucket(t.app, bob.token, name);
  });

  test("list and detail show only the owner's buckets, by id or name", async () => {
    const mine = await createBucket(t.app, alice.token);
    const list = (await call(t.app, { url: "/v1/buckets", token: alice.token })).json();
    assert.ok(list.some((b: { id: string }) => b.id === mine.id));
    assert.ok(
      !(await call(t.app, { url: "/v1/buckets", token: bob.token }))
        .json()
        .some((b: { id: string }) => b.id === mine.id),
    );
    assert.equal((await call(t.app, { url: `/v1/buckets/${mine.id}`, token: alice.token })).json().name, mine.name);
    assert.equal((await call(t.app, { url: `/v1/buckets/${mine.name}`, token: alice.token })).json().id, mine.id);
    expectError(await call(t.app, { url: `/v1/buckets/${mine.id}`, token: bob.token }), 404, "not_found");
  });

  test("detail shows the bytes and objects stored, and uploads in progress", async () => {
    const b = await createBucket(t.app, alice.token);
    const c = s3Client(t.endpoint, await createKey(t.app, alice.token, { permission: "read_write" }));
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "one", Body: "12345" }));
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "two", Body: Buffer.alloc(1000) }));
    let d = (await call(t.app, { url: `/v1/buckets/${b.id}`, token: alice.token })).json();
    assert.deepEqual([d.size_bytes, d.object_count], [1005, 2]);
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "two", Body: "x" })); // replaced: 1000 bytes less 1
    const { UploadId } = await c.send(new CreateMultipartUploadCommand({ Bucket: b.name, Key: "mp" }));
    await c.send(
      new UploadPartCommand({ Bucket: b.name, Key: "mp", UploadId, PartNumber: 1, Body: Buffer.alloc(700) }),
    );
    d = (await call(t.app, { url: `/v1/buckets/${b.id}`, token: alice.token })).json();
    assert.deepEqual([d.size_bytes, d.object_count, d.uploads_in_progress, d.upload_bytes], [6, 2, 1, 700]);
  });

  test("deleting a bucket with objects is 409 bucket_not_empty; ?force=1 deletes it with its bytes", async () => {
    const b = await createBucket(t.app, alice.token);
    const key = await createKey(t.app, alice.token, { permission: "read_write", bucket_ids: [b.id] });
    const c = s3Client(t.endpoint, key);
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "keep", Body: Buffer.alloc(4096, 1) }));
    const { UploadId } = await c.send(new CreateMultipartUploadCommand({ Bucket: b.name, Key: "mp" }));
    await c.send(
      new UploadPartCommand({ Bucket: b.name, Key: "mp", UploadId, PartNumber: 1, Body: Buffer.alloc(2048, 2) }),
    );
    const store = t.s3.store as FilesystemBlobStore;
    const before = await store.usedBytes();
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/buckets/${b.id}`, token: alice.token }),
      409,
      "bucket_not_empty",
    );
    assert.equal(
      (await call(t.app, { method: "DELETE", url: `/v1/buckets/${b.id}?force=1`, token: alice.token })).statusCode,
      204,
    );
    assert.equal(before - (await store.usedBytes()), 4096 + 2048);
    expectError(await call(t.app, { url: `/v1/buckets/${b.id}`, token: alice.token }), 404, "not_found");
    assert.equal(
      (await s3Error(c.send(new PutObjectCommand({ Bucket: b.name, Key: "again", Body: "x" })))).code,
      "NoSuchBucket",
    );
    // an empty bucket goes without force
    const empty = await createBucket(t.app, alice.token);
    assert.equal(
      (await call(t.app, { method: "DELETE", url: `/v1/buckets/${empty.name}`, token: alice.token })).statusCode,
      204,
    );
  });

  test("keys: the secret is shown once, bucket_ids must be the owner's, revoke is 204 then 404", async () => {
    const b = await createBucket(t.app, alice.token);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/buckets/keys",
      token: alice.token,
      body: { name: "ci", bucket_ids: [b.name], permission: "read" },
    });
    assert.equal(res.statusCode, 201);
    const k = res.json();
    assert.match(k.access_key_id, /^PK[A-Z2-7]{18}$/);
    assert.equal(k.secret_access_key.length, 40);
    assert.deepEqual(k.bucket_ids, [b.id]);
    assert.equal(k.permission, "read");
    assert.equal(k.endpoint, t.endpoint);
    const listed = (await call(t.app, { url: "/v1/buckets/keys", token: alice.token })).json();
    const again = listed.find((x: { id: string }) => x.id === k.id);
    assert.equal(again.access_key_id, k.access_key_id);
    assert.equal(again.secret_access_key, undefined);
    // stored sealed, never in plain
    const { rows } = await t.db.query("SELECT secret_sealed FROM bucket_keys WHERE id = $1", [k.id]);
    assert.ok(!rows[0].secret_sealed.includes(k.secret_access_key));
    const bobs = await createBucket(t.app, bob.token);
    const foreign = await call(t.app, {
      method: "POST",
      url: "/v1/buckets/keys",
      token: alice.token,
      body: { name: "x", bucket_ids: [bobs.id], permission: "read" },
    });
    expectError(foreign, 404, "not_found");
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/buckets/keys",
        token: alice.token,
        body: { name: "x", permission: "admin" },
      }),
      400,
    );
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/buckets/keys/${k.id}`, token: bob.token }),
      404,
      "not_found",
    );
    assert.equal(
      (await call(t.app, { method: "DELETE", url: `/v1/buckets/keys/${k.id}`, token: alice.token })).statusCode,
      204,
    );
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/buckets/keys/${k.id}`, token: alice.token }),
      404,
      "not_found",
    );
    assert.ok(
      !(await call(t.app, { url: "/v1/buckets/keys", token: alice.token }))
        .json()
        .some((x: { id: string }) => x.id === k.id),
    );
  });

  test("scopes: buckets:read reads, buckets:write needed to change; instance keys see and change only their bucket", async () => {
    const one = await createBucket(t.app, alice.token);
    const two = await createBucket(t.app, alice.token);
    const reader = await scopedKey(t.app, alice.token, ["buckets:read"]);
    assert.equal((await call(t.app, { url: "/v1/buckets", token: reader })).statusCode, 200);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/buckets", token: reader, body: { name: uniqueName() } }),
      403,
      "scope_insufficient",
    );
    const other = await scopedKey(t.app, alice.token, ["databases:read"]);
    expectError(await call(t.app, { url: "/v1/buckets", token: other }), 403, "scope_insufficient");

    const limited = await scopedKey(t.app, alice.token, [`buckets:write:${one.id}`]);
    const seen = (await call(t.app, { url: "/v1/buckets", token: limited })).json();
    assert.deepEqual(
      seen.map((b: { id: string }) => b.id),
      [one.id],
    );
    assert.equal((await call(t.app, { url: `/v1/buckets/${one.name}`, token: limited })).statusCode, 200);
    expectError(await call(t.app, { url: `/v1/buckets/${two.id}`, token: limited }), 403, "scope_insufficient");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/buckets", token: limited, body: { name: uniqueName() } }),
      403,
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/buckets/keys",
        token: limited,
        body: { name: "k", permission: "read" },
      }),
      403,
    );
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/buckets/${two.id}`, token: limited }),
      403,
      "scope_insufficient",
    );
    // by name too: an instance scope may name the bucket
    const byName = await scopedKey(t.app, alice.token, [`buckets:write:${two.name}`]);
    assert.equal(
      (await call(t.app, { method: "DELETE", url: `/v1/buckets/${two.id}`, token: byName })).statusCode,
      204,
    );
  });
});
