import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { call, createTestApp, expectError, OPERATOR_TOKEN, type TestApp } from "../helpers/app.js";

/**
 * Liveness and readiness (src/meta/health.ts) on a platform running every role: ready names each component; a
 * registry that died shows down (503 naming it) while it is restarted with back-off, live stays 200.
 */
describe("health endpoints", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ startJobs: true });
  });
  after(async () => {
    await t.close();
  });

  const ready = () => call(t.app, { url: "/v1/health/ready" });
  const operator = () =>
    call(t.app, { url: "/v1/operator/health", headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  async function until(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test("live is 200; ready is 200 with every component this process runs up, statuses only", async () => {
    const live = await call(t.app, { url: "/v1/health/live" });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(live.json(), { status: "live" });
    const res = await ready();
    assert.equal(res.statusCode, 200, res.body);
    const { status, components } = res.json();
    assert.equal(status, "ready");
    for (const name of ["store", "jobs", "edge", "registry", "s3"]) assert.equal(components[name]?.status, "up", name);
    assert.ok(!res.body.includes("127.0.0.1"), "no addresses to anonymous callers");
    expectError(await call(t.app, { url: "/v1/operator/health" }), 401, "auth_required");
  });

  test("a registry that died is down while it is restarted with back-off: ready 503 naming it, live 200", async () => {
    const pid = Number(await readFile(path.join(t.config.dataDir, "registry", "registry.pid"), "utf8"));
    process.kill(pid, "SIGKILL");
    await until(async () => (await ready()).statusCode === 503, "readiness to fail");
    const res = await ready();
    expectError(res, 503, "service_unavailable");
    assert.match(res.json().error.message, /registry/);
    assert.doesNotMatch(res.json().error.message, /store|jobs|edge|s3/);
    assert.equal((await call(t.app, { url: "/v1/health/live" })).statusCode, 200);
    const detail = (await operator()).json();
    assert.equal(detail.status, "not_ready");
    assert.equal(detail.components.registry.status, "down");
    assert.match(detail.components.registry.detail, /restart|not running|exited/);
    assert.equal(detail.components.store.status, "up");
    // the supervisor brings it back (the first wait is 1 s) and readiness recovers
    await until(async () => (await ready()).statusCode === 200, "the registry to be restarted");
    assert.match((await operator()).json().components.registry.detail, /^127\.0\.0\.1:\d+$/);
  });
});
