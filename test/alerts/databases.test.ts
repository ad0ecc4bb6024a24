/**
 * Alert rules on databases through HTTP on real components: a real managed PostgreSQL, real client sessions held
 * open, the real sampling pass (its clock driven, as the evaluator's) and the evaluator. A rule on connections fires
 * once while the sessions are open and resolves once after they close; metrics a database has no series of, and
 * database metrics without a database, are 400.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type pg from "pg";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, createRunning } from "../databases/lib.js";
import type { MetricsState } from "../../src/metrics/module.js";
import type { AlertsState } from "../../src/alerts/module.js";

const MINUTE = 60_000;
let t: TestApp;
let user: { token: string; id: string };
let database: { id: string; slug: string; database_url: string };

before(async () => {
  t = await createTestApp({ startJobs: true });
  user = await signup(t.app);
  database = await createRunning(t, user.token, { name: "watched-db" });
});
after(async () => t?.close());

const post = (body: unknown) => call(t.app, { method: "POST", url: "/v1/alert-rules", token: user.token, body });
const rule = async (id: string) => (await call(t.app, { url: `/v1/alert-rules/${id}`, token: user.token })).json();
const sample = (now: number) => t.platform.state<MetricsState>("metrics").sampleDatabases(now);
const evaluate = (now: number) => t.platform.state<AlertsState>("alerts").evaluator.run(now);

test("a rule on a database's connections fires once and resolves once", async () => {
  const created = await post({
    name: "busy-db",
    resource: { kind: "database", id: database.slug },
    metric: "connections",
    comparison: ">=",
    threshold: 3,
    window_minutes: 1,
    for_minutes: 0,
  });
  assert.equal(created.statusCode, 201, created.body);
  const r = created.json();
  assert.deepEqual(r.resource, { kind: "database", id: database.id });

  const t0 = Date.now();
  assert.equal(await sample(t0), 1);
  await evaluate(t0);
  assert.equal((await rule(r.id)).state, "ok");

  const held: pg.Client[] = await Promise.all(Array.from({ length: 4 }, () => connect(database.database_url)));
  try {
    await sample(t0 + MINUTE);
    await evaluate(t0 + MINUTE);
    const firing = await rule(r.id);
    assert.equal(firing.state, "firing", JSON.stringify(firing));
    assert.ok(firing.last_value >= 4, `connections ${firing.last_value}`);
    await sample(t0 + 2 * MINUTE);
    await evaluate(t0 + 2 * MINUTE); // still held: no second firing
  } finally {
    await Promise.all(held.map((c) => c.end()));
  }
  // the sessions are gone; the rule resolves once the condition has been false for a minute (two passes)
  for (const m of [3, 4, 5]) {
    await sample(t0 + m * MINUTE);
    await evaluate(t0 + m * MINUTE);
  }
  const resolved = await rule(r.id);
  assert.equal(resolved.state, "ok", JSON.stringify(resolved));
  assert.ok(resolved.last_value < 3, `connections ${resolved.last_value}`);

  const firings = (await call(t.app, { url: `/v1/alert-rules/${r.id}/firings`, token: user.token })).json().items;
  assert.equal(firings.length, 1);
  assert.equal(firings[0].resolved_reason, "condition cleared");
  const events = (await call(t.app, { url: `/v1/events?type=alert.*&resource_id=${r.id}`, token: user.token })).json()
    .items;
  assert.deepEqual(events.map((e: { type: string }) => e.type).sort(), ["alert.fired", "alert.resolved"]);
});

test("database metrics need a database, and a database has only its own metrics", async () => {
  const base = { name: "checked-db", comparison: ">", threshold: 1 };
  const cpu = await post({ ...base, metric: "cpu_percent", resource: { kind: "database", id: database.id } });
  expectError(cpu, 400, "bad_alert_metric");
  assert.match(cpu.json().error.message, /cpu_percent has no series for a database: connections, /);
  const ownerWide = await post({ ...base, metric: "connections" });
  expectError(ownerWide, 400, "bad_alert_metric");
  assert.match(ownerWide.json().error.message, /whole owner/);
  const onPod = await post({ ...base, metric: "size_bytes", resource: { kind: "pod", id: "any" } });
  expectError(onPod, 400, "bad_alert_metric");
  expectError(
    await post({ ...base, metric: "cache_hit_ratio", threshold: 2, resource: { kind: "database", id: database.id } }),
    400,
    "invalid_request",
  );
  const missing = await post({ ...base, metric: "connections", resource: { kind: "database", id: "no-such-db" } });
  expectError(missing, 404, "not_found");
  assert.match(missing.json().error.message, /database "no-such-db"/);
});
