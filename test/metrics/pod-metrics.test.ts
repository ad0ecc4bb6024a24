/**
 * Per-minute pod metrics through HTTP on a real pod (podman) behind the real edge: requests through the edge show
 * in the pod's requests, 4xx and latency once the edge flushes; a CPU-burning exec shows in CPU once the sampling
 * job runs (driven directly, no waiting for the minute); the operator's Prometheus endpoint answers text with
 * known metric names and refuses a user token.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, OPERATOR_TOKEN, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import type { MetricsState } from "../../src/metrics/module.js";
import { createAppsTestApp, createPod, waitPod } from "../apps/lib.js";
import { request } from "../edge/lib.js";

const DOMAIN = "apps.metrics.test";

let t: TestApp;
let user: { token: string; id: string };
let edge: Edge;
let pod: { id: string; slug: string };

before(async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  t = await createAppsTestApp({ env: { APPS_DOMAIN: DOMAIN } });
  user = await signup(t.app);
  edge = t.platform.state<Edge>("edge");
  pod = await createPod(t, user.token, { name: "metered", image, port: 8080 });
  await waitPod(t, user.token, pod.id, (x) => x.state === "running");
  const deadline = Date.now() + 5000;
  while ((await get("/")).status !== 200) {
    if (Date.now() > deadline) assert.fail("the pod does not answer through the edge");
    await new Promise((r) => setTimeout(r, 50));
  }
});

after(async () => {
  if (!t) return;
  await call(t.app, { method: "DELETE", url: `/v1/pods/${pod.id}`, token: user.token });
  await new Promise((r) => setTimeout(r, 1500));
  await t.close();
});

const get = (path: string) => request(edge.port!, `${pod.slug}.${DOMAIN}`, { path });
const metrics = async (query = "") => {
  const res = await call(t.app, { url: `/v1/pods/${pod.id}/metrics${query}`, token: user.token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};
const sum = (points: Record<string, number>[], key: string) => points.reduce((s, p) => s + p[key], 0);

test("load through the edge shows in the pod's per-minute requests, 4xx and latency", async () => {
  await edge.stats.flush(); // the readiness probes' requests of before()
  const before = sum((await metrics()).points, "requests");
  for (let round = 0; round < 6; round++) {
    const answers = await Promise.all([...Array(5).fill("/"), "/no-such-page"].map((path: string) => get(path)));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 404],
    );
  }
  await edge.stats.flush();
  const m = await metrics();
  assert.equal(m.step, 60);
  // the last hour, per minute: from aligned down to the minute, so the minute now running is the 61st
  assert.ok([60, 61].includes(m.points.length), `${m.points.length} points`);
  assert.equal(sum(m.points, "requests") - before, 36);
  assert.ok(sum(m.points, "errors_4xx") >= 6);
  const busy = m.points.filter((p: { requests: number }) => p.requests > 0).at(-1);
  assert.ok(busy.p50_ms !== null && busy.p99_ms >= busy.p50_ms, JSON.stringify(busy));
  // by slug, a coarser step: the same requests in fewer points
  const coarse = (await call(t.app, { url: `/v1/pods/${pod.slug}/metrics?step=600`, token: user.token })).json();
  assert.ok([6, 7].includes(coarse.points.length), `${coarse.points.length} points`);
  assert.equal(sum(coarse.points, "requests"), sum(m.points, "requests"));
});

test("a CPU-burning exec shows in CPU once the sampling job runs", async () => {
  const sampler = t.platform.state<MetricsState>("metrics").sampler;
  assert.ok((await sampler.sample()) >= 1, "the running pod is sampled");
  const res = await call(t.app, {
    method: "POST",
    url: `/v1/pods/${pod.id}/exec`,
    token: user.token,
    body: { command: ["sh", "-c", "timeout 4 sh -c 'while :; do :; done' >/dev/null 2>&1 &"], timeout_s: 10 },
  });
  assert.equal(res.statusCode, 200, res.body);
  await new Promise((r) => setTimeout(r, 2500));
  await sampler.sample();
  const last = (await metrics()).points.filter((p: { cpu_percent: number | null }) => p.cpu_percent !== null).at(-1);
  assert.ok(last.cpu_percent > 10, `CPU while burning: ${last.cpu_percent}`);
  assert.ok(last.memory_bytes > 0);
  assert.equal(last.restarts, 0);
});

test("traffic shows in the pod's network bytes, from the runtime's counters", async () => {
  const sampler = t.platform.state<MetricsState>("metrics").sampler;
  const t1 = Date.now();
  await sampler.sample(t1 - 60_000); // the counters before the traffic, as the previous minute's sample
  const answers = await Promise.all(Array.from({ length: 20 }, () => get("/")));
  assert.ok(answers.every((a) => a.status === 200));
  await sampler.sample(t1);
  const minute = new Date(t1 - (t1 % 60_000)).toISOString();
  const point = (await metrics()).points.find((p: { at: string }) => p.at === minute);
  assert.ok(point.net_rx_bytes > 20 * 50, JSON.stringify(point));
  assert.ok(point.net_tx_bytes > 20 * 50, JSON.stringify(point));
  const text = (await call(t.app, { url: "/v1/operator/metrics", token: OPERATOR_TOKEN })).body;
  assert.match(
    text,
    new RegExp(`^platform_pod_network_receive_bytes_total\\{pod="${pod.id}",owner="account:${user.id}"\\} [1-9]`, "m"),
  );
});

test("the window is checked, and another account's pod is not found", async () => {
  const bad = await call(t.app, { url: `/v1/pods/${pod.id}/metrics?step=90`, token: user.token });
  expectError(bad, 400, "bad_metrics_window");
  const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
  expectError(
    // a step under an hour reads minutes, kept 7 days (whole-hour steps read the 90-day roll-up: test/metrics/series)
    await call(t.app, { url: `/v1/pods/${pod.id}/metrics?from=${old}&step=600`, token: user.token }),
    400,
    "bad_metrics_window",
  );
  const other = await signup(t.app);
  expectError(await call(t.app, { url: `/v1/pods/${pod.id}/metrics`, token: other.token }), 404, "not_found");
});

test("a pod group's series adds its members' samples and counts the group host's requests", async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const created = await call(t.app, {
    method: "POST",
    url: "/v1/pod-groups",
    token: user.token,
    body: { name: "metered-group", image, port: 8080, replica_min: 2, replica_max: 2 },
  });
  assert.equal(created.statusCode, 201, created.body);
  const group = created.json();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const g = (await call(t.app, { url: `/v1/pod-groups/${group.id}`, token: user.token })).json();
      if (g.replicas.filter((r: { state: string }) => r.state === "running").length === 2) break;
      if (Date.now() > deadline) assert.fail("the group's members never ran");
      await new Promise((r) => setTimeout(r, 200));
    }
    const host = `${group.slug}.${DOMAIN}`;
    while ((await request(edge.port!, host, { path: "/" })).status !== 200) {
      if (Date.now() > deadline) assert.fail("the group does not answer through the edge");
      await new Promise((r) => setTimeout(r, 50));
    }
    await edge.stats.flush();
    const url = `/v1/pod-groups/${group.slug}/metrics`;
    const before = sum((await call(t.app, { url, token: user.token })).json().points, "requests");
    await Promise.all(Array.from({ length: 8 }, () => request(edge.port!, host, { path: "/" })));
    await edge.stats.flush();
    assert.ok((await t.platform.state<MetricsState>("metrics").sampler.sample()) >= 3, "the pod and both members");
    const res = await call(t.app, { url, token: user.token });
    assert.equal(res.statusCode, 200, res.body);
    const m = res.json();
    assert.equal(m.group_id, group.id);
    assert.equal(sum(m.points, "requests") - before, 8);
    const last = m.points.filter((p: { replicas: number }) => p.replicas > 0).at(-1);
    assert.equal(last.replicas, 2);
    assert.ok(last.memory_bytes > 0 && last.cpu_percent !== null, JSON.stringify(last));
    assert.ok("net_rx_bytes" in last && "net_tx_bytes" in last, JSON.stringify(last));
    // the pod route does not name a group, nor the group route a pod
    expectError(await call(t.app, { url: `/v1/pods/${group.id}/metrics`, token: user.token }), 404, "not_found");
    expectError(await call(t.app, { url: `/v1/pod-groups/${pod.id}/metrics`, token: user.token }), 404, "not_found");
  } finally {
    await call(t.app, { method: "DELETE", url: `/v1/pod-groups/${group.id}`, token: user.token });
  }
});

test("the operator endpoint answers Prometheus text and refuses a user token", async () => {
  const res = await call(t.app, { url: "/v1/operator/metrics", token: OPERATOR_TOKEN });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers["content-type"]), /^text\/plain/);
  assert.match(res.body, /^# TYPE platform_component_up gauge$/m);
  assert.match(res.body, /^platform_component_up\{component="store"\} 1$/m);
  assert.match(res.body, /^# TYPE platform_job_queue_waiting gauge$/m);
  assert.match(
    res.body,
    new RegExp(`^platform_pod_cpu_percent\\{pod="${pod.id}",owner="account:${user.id}"\\} [0-9.]+$`, "m"),
  );
  assert.match(
    res.body,
    new RegExp(
      `^platform_app_requests_5m\\{kind="pod",app="${pod.id}",owner="account:${user.id}"\\} [1-9][0-9]*$`,
      "m",
    ),
  );
  expectError(await call(t.app, { url: "/v1/operator/metrics", token: user.token }), 401, "auth_required");
});
