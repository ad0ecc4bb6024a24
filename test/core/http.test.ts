import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { freePort } from "../../src/pgserver/cluster.js";
import { RedisRateLimitStore } from "../../src/http/rate-limit.js";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

describe("error bodies and request ids", () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp();
    token = (await signup(t.app)).token;
  });
  after(async () => {
    await t.close();
  });

  test("malformed JSON gives 400 bad_json", async () => {
    const res = await t.app.inject({
      method: "PATCH",
      url: "/v1/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: '{"locale":',
    });
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
    const res = await call(t.app, {
      method: "PATCH",
      url: "/v1/me",
      token,
      body: { display_name: "x", email: "evil@example.com" },
    });
    expectError(res, 400, "invalid_request");
    assert.match(res.json().error.message, /email/);
    const me = (await call(t.app, { url: "/v1/me", token })).json();
    assert.equal(me.display_name, null);
    assert.notEqual(me.email, "evil@example.com");
  });

  test("a body over the size limit gives 413", async () => {
    const res = await call(t.app, {
      method: "PATCH",
      url: "/v1/me",
      token,
      body: { display_name: "x".repeat(1024 * 1024 + 10) },
    });
    expectError(res, 413, "payload_too_large");
  });

  test("a wrong content type gives 415 in the error body", async () => {
    const res = await t.app.inject({
      method: "PATCH",
      url: "/v1/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/xml" },
      payload: "<a/>",
    });
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

/** Sends raw bytes to a listening app and collects everything until the server closes the connection. */
function rawExchange(
  port: number,
  write: (socket: net.Socket) => void,
  timeoutMs = 20_000,
): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection still open after ${timeoutMs} ms: ${text}`));
    }, timeoutMs);
    socket.on("connect", () => write(socket));
    socket.on("data", (d) => {
      text += d.toString("utf8");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started });
    });
  });
}

/** Status and parsed JSON body of a raw HTTP/1.1 answer. */
function parseRaw(text: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  return { status, body: JSON.parse(body) };
}

describe("bad input never gives a 500: one rule in the HTTP layer for every route", () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp();
    token = (await signup(t.app)).token;
  });
  after(async () => {
    await t.close();
  });

  const BAD = { nul: "a\u0000b", surrogate: "a\ud800b", lowSurrogate: "a\udc00b" };

  test("a NUL or unpaired surrogate in a path id is 404 not_found, on reads and mutations", async () => {
    for (const [method, url] of [
      ["GET", "/v1/databases/abc%00def"],
      ["DELETE", "/v1/databases/abc%00def"],
      ["POST", "/v1/databases/abc%00def/rotate-password"],
      ["DELETE", "/v1/api-keys/abc%00"],
      ["GET", "/v1/databases/%ED%A0%80"],
      ["GET", "/v1/databases/%ED%A0%80x"],
    ] as const) {
      expectError(await call(t.app, { method, url, token }), 404, "not_found");
    }
  });

  test("a NUL or unpaired surrogate in a body field is 400 invalid_request naming the field, and nothing is stored", async () => {
    for (const bad of Object.values(BAD)) {
      const me = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { display_name: bad } });
      expectError(me, 400, "invalid_request");
      assert.match(me.json().error.message, /display_name/);
      const key = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token,
        body: { name: bad, scopes: ["databases:read"] },
      });
      expectError(key, 400, "invalid_request");
      assert.match(key.json().error.message, /"name"/);
      const cli = await call(t.app, {
        method: "POST",
        url: "/v1/cli/errors",
        token,
        body: {
          reports: [
            { kind: "crash", command: "ok" },
            { kind: "crash", message: bad },
          ],
        },
      });
      expectError(cli, 400, "invalid_request");
      assert.match(cli.json().error.message, /reports\.1\.message/);
    }
    assert.equal((await call(t.app, { url: "/v1/me", token })).json().display_name, null);
  });

  test("a NUL in an object key or a query parameter is 400 naming it", async () => {
    const key = await call(t.app, {
      method: "POST",
      url: "/v1/billing/toss/webhook?key=x",
      body: { ["pay\u0000mentKey"]: "x" },
    });
    expectError(key, 400, "invalid_request");
    const query = await call(t.app, { url: "/v1/me/audit?cursor=a%00b", token });
    expectError(query, 400, "invalid_request");
    assert.match(query.json().error.message, /cursor/);
  });

  test("a refused mutation is still audited, with its target made storable", async () => {
    const res = await call(t.app, { method: "DELETE", url: "/v1/api-keys/abc%00def", token });
    expectError(res, 404, "not_found");
    const { rows } = await t.db.query("SELECT target, status FROM audit_log WHERE request_id = $1", [
      res.headers["x-request-id"],
    ]);
    assert.deepEqual(rows, [{ target: "abc\\u0000def", status: 404 }]);
  });

  test("Fastify's own errors use the one error body: a 300-character path parameter is 414", async () => {
    const res = await call(t.app, { url: `/v1/databases/${"a".repeat(300)}`, token });
    expectError(res, 414, "uri_too_long");
    assert.deepEqual(Object.keys(res.json().error).sort(), ["code", "message"]);
  });

  test("a JSON body sent as text/plain is 415, not parsed", async () => {
    const res = await t.app.inject({
      method: "PATCH",
      url: "/v1/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
      payload: JSON.stringify({ display_name: "x" }),
    });
    expectError(res as never, 415, "unsupported_media_type");
  });

  test("a mutation without a body schema refuses fields and non-object bodies, accepts none or {}", async () => {
    const id = randomUUID();
    const extra = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${id}/rotate-password`,
      token,
      body: { zz_unknown: 1 },
    });
    expectError(extra, 400, "invalid_request");
    assert.match(extra.json().error.message, /zz_unknown/);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token, body: [1] }),
      400,
      "invalid_request",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token, body: {} }),
      404,
      "not_found",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token }),
      404,
      "not_found",
    );
    const other = await signup(t.app);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/auth/logout", token: other.token, body: { everywhere: true } }),
      400,
      "invalid_request",
    );
    assert.equal(
      (await call(t.app, { url: "/v1/me", token: other.token })).statusCode,
      200,
      "the refused logout did nothing",
    );
  });
});

describe("the server's own limits answer in the one error body", () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({
      env: { HTTP_HEADERS_TIMEOUT_MS: "1000", HTTP_REQUEST_TIMEOUT_MS: "2000", HTTP_KEEP_ALIVE_TIMEOUT_MS: "1000" },
    });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(async () => {
    await t.close();
  });

  test("headers over the server's limit are 431 headers_too_large", async () => {
    const { text } = await rawExchange(port, (s) =>
      s.write(`GET /v1/edition HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`),
    );
    const { status, body } = parseRaw(text);
    assert.equal(status, 431);
    assert.equal(body.error.code, "headers_too_large");
  });

  test("a request that is not HTTP is 400 invalid_request", async () => {
    const { text } = await rawExchange(port, (s) => s.write("BLAH\u0001 / HTTP/9\r\n\r\n"));
    const { status, body } = parseRaw(text);
    assert.equal(status, 400);
    assert.equal(body.error.code, "invalid_request");
  });

  test("slow clients are dropped with 408: headers dribbled byte by byte, or a body that never completes", async () => {
    const dribble = (s: net.Socket) => {
      s.write("GET /v1/edition HTTP/1.1\r\nHost: x\r\n");
      const timer = setInterval(() => {
        if (!s.destroyed) s.write("X");
      }, 200);
      s.on("close", () => clearInterval(timer));
    };
    const stalledBody = (s: net.Socket) =>
      s.write(
        `POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
      );
    const results = await Promise.all(
      [dribble, dribble, dribble, stalledBody].map((w) => rawExchange(port, w, 10_000)),
    );
    for (const { text, ms } of results) {
      assert.ok(ms < 5000, `dropped after ${ms} ms`);
      const { status, body } = parseRaw(text);
      assert.equal(status, 408, text);
      assert.equal(body.error.code, "request_timeout");
    }
  });

  test("the server still answers others after dropping slow clients", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/edition`);
    assert.equal(res.status, 200);
  });
});

/** Fires n requests at once and counts 2xx per one-second window, read from the clock around the burst. */
async function burst(apps: TestApp[], tokens: string[], n: number) {
  const started = Date.now();
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      call(apps[i % apps.length].app, { url: "/v1/token", token: tokens[i % tokens.length] }),
    ),
  );
  const windows = Math.floor(Date.now() / 1000) - Math.floor(started / 1000) + 1;
  return {
    results,
    windows,
    ok: results.filter((r) => r.statusCode === 200).length,
    limited: results.filter((r) => r.statusCode === 429),
  };
}

describe("rate limit: 100 requests per second per account", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_RPS: "100" } });
  });
  after(async () => {
    await t.close();
  });

  test("an account's tokens share one limit; excess gets 429 with Retry-After and RateLimit headers", async () => {
    const user = await signup(t.app);
    const second = (
      await call(t.app, {
        method: "POST",
        url: "/v1/auth/login",
        body: { email: user.email, password: "correct horse battery" },
      })
    ).json().token;
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
    redis = spawn(redisBin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
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
    b = await createTestApp({
      env: { RATE_LIMIT_RPS: "100", REDIS_URL: url },
      rateLimit: stores[1],
      databaseUrl: a.url,
    });
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
});
