import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort } from "../../src/pgserver/cluster.js";
import { RedisRateLimitStore } from "../../src/http/rate-limit.js";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { burst } from "./http-helpers.js";

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
