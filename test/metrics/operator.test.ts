/**
 * The operator's Prometheus endpoint through prom-client: each app instance has a registry of its own (two
 * platforms in one process both answer, each family once), with the process's own metrics and readiness beside the
 * store's series.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, OPERATOR_TOKEN, type TestApp } from "../helpers/app.js";

let a: TestApp;
let b: TestApp;

before(async () => {
  [a, b] = await Promise.all([createTestApp(), createTestApp()]);
});
after(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const scrape = async (t: TestApp) => {
  const res = await call(t.app, { url: "/v1/operator/metrics", token: OPERATOR_TOKEN });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
  return res.body;
};

test("two platforms in one process scrape their own registries, with process metrics and readiness", async () => {
  for (const t of [a, b, a]) {
    const text = await scrape(t);
    for (const family of ["platform_component_up", "platform_ready", "process_cpu_user_seconds_total"]) {
      assert.equal(text.match(new RegExp(`^# TYPE ${family} `, "gm"))?.length, 1, family);
    }
    assert.match(text, /^platform_component_up\{component="store"\} 1$/m);
    // a bare test app runs no jobs or edge: those are down, so the platform is not ready
    const anyDown = /^platform_component_up\{[^}]*\} 0$/m.test(text);
    assert.match(text, new RegExp(`^platform_ready ${anyDown ? 0 : 1}$`, "m"));
    assert.match(text, /^nodejs_heap_size_used_bytes \d+/m);
    assert.match(text, /^# TYPE platform_pod_restarts_total counter$/m);
  }
});
