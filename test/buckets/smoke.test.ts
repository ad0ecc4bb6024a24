import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { signup } from "../helpers/app.js";
import { bucketsApp, createBucket, createKey, s3Client } from "./lib.js";

describe("smoke", () => {
  let t: Awaited<ReturnType<typeof bucketsApp>>;
  before(async () => {
    t = await bucketsApp();
  });
  after(async () => t?.close());
  test("put get list", async () => {
    const u = await signup(t.app);
    const b = await createBucket(t.app, u.token);
    const k = await createKey(t.app, u.token, { permission: "read_write" });
    const c = s3Client(t.endpoint, k);
    await c.send(new PutObjectCommand({ Bucket: b.name, Key: "a/b.txt", Body: "hello" }));
    const got = await c.send(new GetObjectCommand({ Bucket: b.name, Key: "a/b.txt" }));
    assert.equal(await got.Body!.transformToString(), "hello");
    const list = await c.send(new ListObjectsV2Command({ Bucket: b.name }));
    assert.equal(list.Contents?.[0].Key, "a/b.txt");
  });
});
