import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort } from "../../src/pgserver/cluster.js";
import { RedisRateLimitStore } from "../../src/http/rate-limit.js";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

describe("error bodies and request ids", () => {
  let t: TestApp;
  let token: string;
  before(async () => { t = await createTestApp(); token = (await signup(t.app)).token; });
  after(async () => { await t.close(); });

  test("malformed JSON gives 400 bad_json", async () => {
    const res = await t.app.inject({ method: "PATCH", url: "/v1/me", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, payload: "{\"locale\":" });
    expectError(res as never, 400, "bad_json");
  });

  test("unknown path gives 404 not_found in the error body", async () => {
    expectError(await call(t.app, { url: "/v1/no/such/thing" }), 404, "not_found");
  });

  test("a schema violation gives 400 invalid_request naming the field", async () => {
    const res = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "fr" } });
    expectError(res, 400, "invalid_request");
    assert.match(res.json().error.message, /locale/);
  });

  test("unknown fields in a mutation body are rejected, nothing is changed", async () => {
    const res = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { display_name: "x", email: "evil@example.com" } });
    expectError(res, 400, "invalid_request");
    assert.match(res.json().error.message, /email/);
    const me = (await call(t.app, { url: "/v1/me", token })).json();
    assert.equal(me.display_name, null);
    assert.notEqual(me.email, "evil@example.com");
  });

  test("a body over the size limit gives 413", async () => {
    const res = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { display_name: "x".repeat(1024 * 1024 + 10) } });
    expectError(res, 413, "payload_too_large");
  });

  test("a wrong content type gives 415 in the error body", async () => {
    const res = await t.app.inject({ method: "PATCH", url: "/v1/me", headers: { authorization: `Bearer ${token}`, "content-type": "text/xml" }, payload: "<a/>" });
    expectError(res as never, 415, "unsupported_media_type");
  });

  test("every response carries a distinct x-request-id", async () => {
    const a = await call(t.app, { url: "/v1/edition" });
    const b = await call(t.app, { url: "/v1/nope" });
    assert.match(String(a.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.match(String(b.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.notEqual(a.headers["x-request-id"], b.headers["x-request-id"]);
  });
});

/** Fires n requests at once and counts 2xx per one-second window, read from the clock around the burst. */
async function burst(apps: TestApp[], tokens: string[], n: number) {
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: n }, (_, i) => call(apps[i % apps.length].app, { url: "/v1/token", token: tokens[i % tokens.length] })));
  const windows = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
  return { results, windows, ok: results.filter((r) => r.statusCode === 200).length, limited: results.filter((r) => r.statusCode === 429) };
}

describe("rate limit: 100 requests per second per account", () => {
  let t: TestApp;
  before(async () => { t = await createTestApp({ env: { RATE_LIMIT_RPS: "100" } }); });
  after(async () => { await t.close(); });

  test("an account's tokens share one limit; excess gets 429 with Retry-After and RateLimit headers", async () => {
    const user = await signup(t.app);
    const second = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email: user.email, password: "correct horse battery" } })).json().token;
    const { ok, windows, limited, results } = await burst([t], [user.token, second], 250);
    assert.ok(ok <= 100 * windows, `${ok} successes in ${windows} window(s)`);
    assert.ok(limited.length >= 250 - 100 * windows);
    const r = limited[0];
    expectError(r, 429, "too_many_requests");
    assert.match(String(r.headers["retry-after"]), /^\d+$/);
    assert.match(String(r.headers["ratelimit-policy"]), /^"default";q=100;w=1$/);
    assert.match(String(r.headers.ratelimit), /^"default";r=0;t=\d+$/);
    assert.match(String(results.find((x) => x.statusCode === 200)!.headers.ratelimit), /^"default";r=\d+;t=\d+$/);
  });

  test("another account is not limited by the first one's traffic", async () => {
    const a = await signup(t.app);
    const b = await signup(t.app);
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
    await burst([t], [a.token], 150);
    assert.equal((await call(t.app, { url: "/v1/token", token: b.token })).statusCode, 200);
  });
});

const redisBin = spawnSync("sh", ["-c", "command -v redis-server"]).stdout.toString().trim();

describe("rate limit shared through Redis", { skip: redisBin ? false : "redis-server is not installed" }, () => {
  let redis: ChildProcess;
  let a: TestApp;
  let b: TestApp;
  const stores: RedisRateLimitStore[] = [];
  before(async () => {
    const port = await freePort();
    redis = spawn(redisBin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    const url = `redis://127.0.0.1:${port}`;
    for (let i = 0; i < 50; i++) {
      try {
        const probe = new RedisRateLimitStore(url);
        await probe.hit("probe");
        await probe.close();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    stores.push(new RedisRateLimitStore(url), new RedisRateLimitStore(url));
    a = await createTestApp({ env: { RATE_LIMIT_RPS: "100", REDIS_URL: url }, rateLimit: stores[0] });
    b = await createTestApp({ env: { RATE_LIMIT_RPS: "100", REDIS_URL: url }, rateLimit: stores[1], databaseUrl: a.url });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    for (const s of stores) await s.close();
    redis?.kill();
  });

  test("two API processes enforce one limit together", async () => {
    const user = await signup(a.app);
    const { ok, windows, limited } = await burst([a, b], [user.token], 300);
    assert.ok(ok <= 100 * windows, `${ok} successes in ${windows} window(s) across two processes`);
    assert.ok(limited.length >= 300 - 100 * windows);
  });
});

describe("Idempotency-Key on POST", () => {
  let t: TestApp;
  let token: string;
  before(async () => { t = await createTestApp(); token = (await signup(t.app)).token; });
  after(async () => { await t.close(); });

  const issue = (key: string, name = "ci") =>
    call(t.app, { method: "POST", url: "/v1/api-keys", token, headers: { "idempotency-key": key }, body: { name, scopes: ["databases:read"] } });

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
    assert.ok(results.every((r) => r.statusCode === 201), results.map((r) => r.statusCode).join(","));
    assert.equal(new Set(results.map((r) => r.json().id)).size, 1);
    const list = (await call(t.app, { url: "/v1/api-keys", token })).json();
    assert.equal(list.filter((k: { name: string }) => k.name === "parallel").length, 1);
  });

  test("keys are per account: another account's same key is a new request", async () => {
    const other = await signup(t.app);
    const mine = await issue("shared-key", "mine");
    const theirs = await call(t.app, { method: "POST", url: "/v1/api-keys", token: other.token, headers: { "idempotency-key": "shared-key" }, body: { name: "mine", scopes: ["databases:read"] } });
    assert.equal(theirs.statusCode, 201);
    assert.notEqual(theirs.json().id, mine.json().id);
  });

  test("a failed validation is not stored: the corrected retry with the same key runs", async () => {
    const bad = await call(t.app, { method: "POST", url: "/v1/api-keys", token, headers: { "idempotency-key": "key-4" }, body: { name: "x", scopes: ["nosuch:read"] } });
    assert.equal(bad.statusCode, 400);
    const replay = await call(t.app, { method: "POST", url: "/v1/api-keys", token, headers: { "idempotency-key": "key-4" }, body: { name: "x", scopes: ["nosuch:read"] } });
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
});
