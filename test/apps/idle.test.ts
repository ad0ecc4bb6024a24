/**
 * Scale-to-zero (issue 30) on real podman behind the real edge: a pod and a pod group with idle_stop_seconds stop
 * after their idle time (the idle sweep run as its job would, instead of waiting a minute for its schedule), meter
 * nothing while stopped, and the next requests through the edge are held while one fresh start happens, then
 * answered: 20 concurrent first requests make exactly one start.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import type { AppsState } from "../../src/apps/module.js";
import { idleJobs } from "../../src/apps/idle/service.js";
import { podMetering } from "../../src/apps/metering.js";
import { containersOf, createAppsTestApp, createPod, waitPod } from "./lib.js";
import { request } from "../edge/lib.js";

const DOMAIN = "apps.idle.test";
const IDLE = 2;

let t: TestApp;
let user: { token: string; id: string };
let port: number;
let image: string;

before(async () => {
  image = await testImage("TEST_IMAGE_HTTPD_V1");
  t = await createAppsTestApp({ env: { APPS_DOMAIN: DOMAIN, APPS_IDLE_MIN_SECONDS: String(IDLE) } });
  user = await signup(t.app);
  port = t.platform.state<Edge>("edge").port!;
});

after(async () => {
  if (!t) return;
  for (const g of (await call(t.app, { url: "/v1/pod-groups", token: user.token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pod-groups/${g.id}`, token: user.token });
  for (const p of (await call(t.app, { url: "/v1/pods", token: user.token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
  await new Promise((r) => setTimeout(r, 1500));
  await t.close();
});

const edge = () => t.platform.state<Edge>("edge");
const get = (slug: string) => request(port, `${slug}.${DOMAIN}`);
const api = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown) =>
  call(t.app, { method, url, token: user.token, body });

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** the idle sweep, as its every-minute job runs it, once the last request is stored and the idle time passed */
async function sweepAfterIdle(): Promise<void> {
  await edge().stats.flush();
  await new Promise((r) => setTimeout(r, IDLE * 1000 + 300));
  const [job] = idleJobs(t.platform.state<AppsState>("apps").idle);
  await job.handler({}, { id: "test", retryCount: 0 });
}

/** how many times the pods were woken (the store's count: a wake keeps the generation) */
const wakes = async (podIds: string[]) =>
  (
    await t.db.query<{ n: number }>("SELECT COALESCE(sum(wakes), 0)::int AS n FROM pods WHERE id = ANY($1::uuid[])", [
      podIds,
    ])
  ).rows[0].n;

test("idle_stop_seconds is checked, set on create and by PATCH without a new deployment", async () => {
  expectError(await api("POST", "/v1/pods", { name: "too-soon", image, port: 8080, idle_stop_seconds: 1 }), 400);
  expectError(await api("POST", "/v1/pods", { name: "zero", image, port: 8080, idle_stop_seconds: 0 }), 400);
  const pod = await createPod(t, user.token, { name: "idle-set", image, port: 8080 });
  assert.equal(pod.idle_stop_seconds, null);
  const patched = await api("PATCH", `/v1/pods/${pod.id}`, { idle_stop_seconds: 600 });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(patched.json().idle_stop_seconds, 600);
  assert.equal(patched.json().generation, pod.generation, "no rollout for the idle setting");
  const off = await api("PATCH", `/v1/pods/${pod.id}`, { idle_stop_seconds: null });
  assert.equal(off.json().idle_stop_seconds, null);
  await api("DELETE", `/v1/pods/${pod.id}`);
});

test("an idle pod stops after its idle time; 20 concurrent first requests through the edge make one start", async () => {
  const pod = await createPod(t, user.token, { name: "sleepy", image, port: 8080, idle_stop_seconds: IDLE });
  await waitPod(t, user.token, pod.id, (p) => p.state === "running" && p.ready);
  await until("the pod answers at the edge", 5000, async () => (await get(pod.slug)).status === 200);

  // a request within the idle time keeps it running (once the edge stored it: its flush, run here at once)
  await edge().stats.flush();
  const [job] = idleJobs(t.platform.state<AppsState>("apps").idle);
  await job.handler({}, { id: "test", retryCount: 0 });
  assert.equal((await api("GET", `/v1/pods/${pod.id}`)).json().desired_state, "running");

  await sweepAfterIdle();
  const stopped = await waitPod(t, user.token, pod.id, (p) => p.state === "stopped");
  assert.equal(stopped.desired_state, "idle_stopped");
  assert.equal(stopped.state_reason, "stopped while idle");
  // kept, stopped: the wake starts it again rather than making a new one
  assert.deepEqual(
    (await containersOf(pod.id)).map((c) => c.State),
    ["exited"],
  );
  // an idle-stopped pod pays nothing
  const metered = await podMetering().billableOf(t.db, { kind: "account", id: user.id });
  assert.ok(!metered.some((m) => m.id === pod.id), "an idle-stopped pod is not metered");

  const askedBefore = edge().waker!.asked;
  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: 20 }, () => get(pod.slug)));
  assert.deepEqual(
    answers.map((a) => `${a.status} ${a.body.trim()}`),
    Array(20).fill("200 v1"),
  );
  const tookMs = Date.now() - started;
  if (process.env.WAKE_TRACE) console.error(`WAKE-MS ${tookMs}`);
  assert.equal(edge().waker!.asked - askedBefore, 1, "one wake asked by the edge");
  assert.equal(await wakes([pod.id]), 1, "one start recorded");
  const awake = (await api("GET", `/v1/pods/${pod.id}`)).json();
  assert.equal(awake.desired_state, "running");
  // the kept container started again: no new generation, no new container
  assert.equal(awake.generation, stopped.generation);
  const containers = await containersOf(pod.id);
  assert.deepEqual(
    containers.map((c) => c.State),
    ["running"],
  );
  assert.ok(tookMs < 30_000);
  // the owner's events say both (GET /v1/events)
  const events = await api("GET", `/v1/events?resource_kind=pod&resource_id=${pod.id}`);
  assert.equal(events.statusCode, 200, events.body);
  assert.deepEqual(
    events.json().items.map((e: { type: string }) => e.type),
    ["app.woken", "app.scaled_to_zero"],
  );
  await api("DELETE", `/v1/pods/${pod.id}`);
});

test("an idle pod group stops with its members and is woken whole by the next requests", async () => {
  const created = await api("POST", "/v1/pod-groups", {
    name: "sleepy-group",
    image,
    port: 8080,
    replica_min: 2,
    replica_max: 2,
    idle_stop_seconds: IDLE,
  });
  assert.equal(created.statusCode, 201, created.body);
  const g = created.json();
  assert.equal(g.idle_stop_seconds, IDLE);
  const group = () => api("GET", `/v1/pod-groups/${g.id}`).then((r) => r.json());
  await until("the group runs", 60_000, async () => (await group()).replicas.every((m: any) => m.state === "running"));
  await until("the group answers at the edge", 10_000, async () => (await get(g.slug)).status === 200);

  await sweepAfterIdle();
  await until("members stopped", 30_000, async () => (await group()).replicas.every((m: any) => m.state === "stopped"));
  const asleep = await group();
  assert.equal(asleep.state, "idle_stopped");
  const members = asleep.replicas.map((m: any) => m.id);
  for (const id of members) assert.equal((await api("GET", `/v1/pods/${id}`)).json().desired_state, "idle_stopped");

  const answers = await Promise.all(Array.from({ length: 20 }, () => get(g.slug)));
  assert.deepEqual(
    answers.map((a) => `${a.status} ${a.body.trim()}`),
    Array(20).fill("200 v1"),
  );
  assert.equal(await wakes(members), 2, "one start per member, once");
  await until("every member runs again", 30_000, async () => {
    const now = await group();
    return now.state === "running" && now.replicas.every((m: any) => m.state === "running");
  });
});
