/**
 * Scale-to-zero when a wake cannot happen (issue 30): admission refuses the start like a start (a partner
 * department's run limit) and the edge answers 503 with the refusal's words while the pod stays stopped; a start
 * that takes longer than EDGE_WAKE_TIMEOUT_MS answers 503 with Retry-After.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import type { AppsState } from "../../src/apps/module.js";
import { createAppsTestApp, waitPod } from "./lib.js";
import { request } from "../edge/lib.js";

const DOMAIN = "apps.idle-refused.test";
const IDLE = 1;

let t: TestApp;
let image: string;
let partnerKey: string;
let port: number;

before(async () => {
  image = await testImage("TEST_IMAGE_HTTPD_V1");
  t = await createAppsTestApp({
    env: { APPS_DOMAIN: DOMAIN, APPS_IDLE_MIN_SECONDS: String(IDLE), EDGE_WAKE_TIMEOUT_MS: "3000" },
  });
  port = t.platform.state<Edge>("edge").port!;
  const partner = await signup(t.app);
  const made = await call(t.app, {
    method: "PUT",
    url: `/v1/operator/partners/${partner.id}`,
    token: OPERATOR_TOKEN,
    body: {},
  });
  assert.equal(made.statusCode, 200, made.body);
  partnerKey = await scopedKey(t.app, partner.token, ["partner:*"]);
});

after(async () => {
  if (!t) return;
  const { rows } = await t.db.query<{ id: string }>("SELECT id FROM pods WHERE desired_state <> 'removed'");
  await t.db.query("UPDATE pods SET desired_state = 'removed' WHERE desired_state <> 'removed'");
  const worker = t.platform.state<AppsState>("apps").worker;
  await Promise.all(rows.map((r) => worker.reconcile(r.id).catch(() => null)));
  await t.close();
});

const asPartner = (method: "PUT" | "POST", url: string, body: unknown) =>
  call(t.app, { method, url, token: partnerKey, body });

async function child(department: string): Promise<string> {
  const res = await asPartner("POST", "/v1/partner/users", {
    external_ref: `ext-${randomUUID()}`,
    department_code: department,
    token: { scopes: ["pods:*"] },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().token.key;
}

async function createPod(token: string, body: Record<string, unknown>) {
  const res = await call(t.app, { method: "POST", url: "/v1/pods", token, body: { image, size: "nano", ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** stored requests, then past the idle time, then the idle sweep */
async function sweepAfterIdle(): Promise<void> {
  await t.platform.state<Edge>("edge").stats.flush();
  await new Promise((r) => setTimeout(r, IDLE * 1000 + 300));
  await t.platform.state<AppsState>("apps").idle.sweep();
}

test("a wake refused by admission answers 503 with the reason, and the pod stays stopped", async () => {
  assert.equal(
    (await asPartner("PUT", "/v1/partner/departments", { departments: [{ code: "team" }] })).statusCode,
    200,
  );
  assert.equal((await asPartner("PUT", "/v1/partner/departments/team/policy", { max_running: 1 })).statusCode, 200);
  const a = await child("team");
  const b = await child("team");
  const sleepy = await createPod(a, { name: "refused-wake", port: 8080, idle_stop_seconds: IDLE });
  await waitPod(t, a, sleepy.id, (p) => p.state === "running" && p.ready);
  await sweepAfterIdle();
  await waitPod(t, a, sleepy.id, (p) => p.state === "stopped" && p.desired_state === "idle_stopped");
  // the stopped pod freed the department's one slot; another member takes it
  await createPod(b, { name: "slot-taker", port: 8080 });

  const answer = await request(port, `${sleepy.slug}.${DOMAIN}`);
  assert.equal(answer.status, 503);
  assert.equal(answer.headers["retry-after"], "60");
  assert.match(answer.body, /stopped while idle and cannot be started now/);
  assert.match(answer.body, /allows 1 running app instances/);
  const after = (await call(t.app, { url: `/v1/pods/${sleepy.id}`, token: a })).json();
  assert.equal(after.desired_state, "idle_stopped");
  assert.equal(after.generation, sleepy.generation, "nothing was started");
});

test("a start that is not ready within EDGE_WAKE_TIMEOUT_MS answers 503 with Retry-After", async () => {
  const owner = await signup(t.app);
  // nothing listens on 9090 in this image: the container runs but never passes readiness
  const pod = await createPod(owner.token, { name: "never-ready", port: 9090, idle_stop_seconds: IDLE });
  await waitPod(t, owner.token, pod.id, (p) => p.check_status?.readiness?.state === "failing");
  await sweepAfterIdle();
  await waitPod(t, owner.token, pod.id, (p) => p.state === "stopped" && p.desired_state === "idle_stopped");
  const started = Date.now();
  const answer = await request(port, `${pod.slug}.${DOMAIN}`);
  assert.equal(answer.status, 503);
  assert.equal(answer.headers["retry-after"], "10");
  assert.match(answer.body, /did not start in time/);
  assert.ok(Date.now() - started >= 2900, "held for the bound");
  // the wake itself stands: the pod was started, only the answer gave up
  assert.equal((await call(t.app, { url: `/v1/pods/${pod.id}`, token: owner.token })).json().desired_state, "running");
});
