import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

describe("Idempotency-Key on POST", () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp();
    token = (await signup(t.app)).token;
  });
  after(async () => {
    await t.close();
  });

  const issue = (key: string, name = "ci") =>
    call(t.app, {
      method: "POST",
      url: "/v1/api-keys",
      token,
      headers: { "idempotency-key": key },
      body: { name, scopes: ["databases:read"] },
    });

  test("a retry with the same key and body replays the first response and causes no second effect", async () => {
    const first = await issue("key-1");
    const second = await issue("key-1");
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.json().id, first.json().id);
    assert.equal(second.json().key, first.json().key);
    assert.equal(second.headers["idempotent-replayed"], "true");
    const list = (await call(t.app, { url: "/v1/api-keys", token })).json();
    assert.equal(list.filter((k: { name: string }) => k.name === "ci").length, 1);
  });

  test("the same key with a different body gives 422", async () => {
    await issue("key-2", "one");
    expectError(await issue("key-2", "two"), 422, "idempotency_key_reused");
  });

  test("concurrent requests with one key cause one effect and all get its response", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => issue("key-3", "parallel")));
    assert.ok(
      results.every((r) => r.statusCode === 201),
      results.map((r) => r.statusCode).join(","),
    );
    assert.equal(new Set(results.map((r) => r.json().id)).size, 1);
    const list = (await call(t.app, { url: "/v1/api-keys", token })).json();
    assert.equal(list.filter((k: { name: string }) => k.name === "parallel").length, 1);
  });

  test("keys are per account: another account's same key is a new request", async () => {
    const other = await signup(t.app);
    const mine = await issue("shared-key", "mine");
    const theirs = await call(t.app, {
      method: "POST",
      url: "/v1/api-keys",
      token: other.token,
      headers: { "idempotency-key": "shared-key" },
      body: { name: "mine", scopes: ["databases:read"] },
    });
    assert.equal(theirs.statusCode, 201);
    assert.notEqual(theirs.json().id, mine.json().id);
  });

  test("a failed validation is not stored: the corrected retry with the same key runs", async () => {
    const bad = await call(t.app, {
      method: "POST",
      url: "/v1/api-keys",
      token,
      headers: { "idempotency-key": "key-4" },
      body: { name: "x", scopes: ["nosuch:read"] },
    });
    assert.equal(bad.statusCode, 400);
    const replay = await call(t.app, {
      method: "POST",
      url: "/v1/api-keys",
      token,
      headers: { "idempotency-key": "key-4" },
      body: { name: "x", scopes: ["nosuch:read"] },
    });
    assert.equal(replay.statusCode, 400);
    assert.equal(replay.headers["idempotent-replayed"], "true", "a completed 4xx answer is replayed too");
  });

  test("the expiry job removes keys older than 24 hours", async () => {
    await issue("old-key", "old");
    await t.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'old-key'");
    const { expireIdempotencyKeys } = await import("../../src/core/module.js");
    await expireIdempotencyKeys(t.db);
    assert.equal((await t.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'old-key'")).rowCount, 0);
    assert.equal((await issue("old-key", "old")).headers["idempotent-replayed"], undefined);
  });

  // the store as a kill leaves it between a create's COMMIT and its stored answer: the key still running, its
  // process gone (here: its lock run out), no answer; the create's transaction bound its result to the key
  const loseAnswer = (key: string) =>
    t.db.query(
      `UPDATE idempotency_keys SET state = 'running', response_status = NULL, response_headers = NULL,
         response_body = NULL, locked_until = now() - interval '1 second' WHERE key = $1`,
      [key],
    );

  test("a create whose answer was lost in a crash: the retry answers the same resource, replayed, and makes no other", async () => {
    const creates: { url: string; body: object; list: string }[] = [
      { url: "/v1/api-keys", body: { name: "lost", scopes: ["databases:read"] }, list: "/v1/api-keys" },
      { url: "/v1/pod-templates", body: { name: "lost-answer" }, list: "/v1/pod-templates" },
      { url: "/v1/static", body: { name: "lost-answer-site" }, list: "/v1/static" },
      { url: "/v1/buckets", body: { name: "lost-answer-bucket" }, list: "/v1/buckets" },
      // the secret shown once comes back the same: it is part of what the create's transaction returned
      { url: "/v1/buckets/keys", body: { name: "lost", permission: "read" }, list: "/v1/buckets/keys" },
    ];
    for (const c of creates) {
      const send = () =>
        call(t.app, {
          method: "POST",
          url: c.url,
          token,
          headers: { "idempotency-key": `lost${c.url}` },
          body: c.body,
        });
      const first = await send();
      assert.equal(first.statusCode, 201, `${c.url}: ${first.body}`);
      const stored = await t.db.query("SELECT committed_result FROM idempotency_keys WHERE key = $1", [`lost${c.url}`]);
      assert.ok(stored.rows[0].committed_result, `${c.url}: its transaction bound the key`);
      const before = (await call(t.app, { url: c.list, token })).json().length;
      await loseAnswer(`lost${c.url}`);
      const retry = await send();
      assert.equal(retry.statusCode, 201, `${c.url}: ${retry.body}`);
      assert.equal(retry.headers["idempotent-replayed"], "true", c.url);
      assert.deepEqual(retry.json(), first.json(), `${c.url}: the same answer`);
      assert.equal((await call(t.app, { url: c.list, token })).json().length, before, `${c.url}: nothing new`);
      // the replay is stored as the answer now
      assert.equal((await send()).json().id, first.json().id);
    }
  });
});
