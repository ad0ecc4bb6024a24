/**
 * Alert rules through HTTP against the real platform: a pod (podman) answering 500 through the real edge, the edge's
 * per-minute rows, the metrics sampler, the events outbox and mail over SMTP to a local inbox. The evaluator's clock
 * is driven (`evaluator.run(now)`) instead of waiting whole minutes; everything it reads was written for real.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import type { MetricsState } from "../../src/metrics/module.js";
import type { AlertsState } from "../../src/alerts/module.js";
import { createAppsTestApp, createPod, waitPod } from "../apps/lib.js";
import { command, edgeReady, viaEdge } from "../apps/checks-lib.js";
import { makeOrg, ORG } from "../orgs/lib.js";

const DOMAIN = "apps.alerts.test";
const MINUTE = 60_000;

const mails: { to: string; subject: string; text: string }[] = [];
const inbox = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, session, callback) {
    simpleParser(stream)
      .then((m) => {
        for (const r of session.envelope.rcptTo)
          mails.push({ to: r.address.toLowerCase(), subject: m.subject ?? "", text: m.text ?? "" });
        callback();
      })
      .catch(callback);
  },
});

let t: TestApp;
let user: { token: string; id: string; email: string };
let pod: { id: string; slug: string; url: string };

before(async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  await new Promise<void>((resolve) => inbox.listen(0, "127.0.0.1", resolve));
  const smtp = `smtp://127.0.0.1:${(inbox.server.address() as AddressInfo).port}`;
  t = await createAppsTestApp({ env: { APPS_DOMAIN: DOMAIN, SMTP_URL: smtp } });
  user = await signup(t.app);
  // busybox httpd whose /cgi-bin/health answers 500 (test/apps/checks-lib.ts)
  pod = await createPod(t, user.token, {
    name: "failing",
    image,
    port: 8080,
    command: command({ body: "v1", health: 500 }),
  });
  await waitPod(t, user.token, pod.id, (x) => x.state === "running");
  await edgeReady(t.platform.state<Edge>("edge").port!, pod.url);
});

after(async () => {
  if (t) {
    await call(t.app, { method: "DELETE", url: `/v1/pods/${pod.id}`, token: user.token });
    await new Promise((r) => setTimeout(r, 1500));
    await t.close();
  }
  await new Promise<void>((resolve) => inbox.close(() => resolve()));
});

const evaluate = (now: number) => t.platform.state<AlertsState>("alerts").evaluator.run(now);
const post = (body: unknown, token = user.token, headers?: Record<string, string>) =>
  call(t.app, { method: "POST", url: "/v1/alert-rules", token, body, headers });
const rule = async (id: string) => (await call(t.app, { url: `/v1/alert-rules/${id}`, token: user.token })).json();
async function create(body: Record<string, unknown>) {
  const res = await post(body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

test("an alert on 5xx fires once and resolves once: one event and one mail each", async () => {
  const r = await create({
    name: "five-hundreds",
    resource: { kind: "pod", id: pod.slug },
    metric: "errors_5xx",
    comparison: ">",
    threshold: 2,
    window_minutes: 5,
    for_minutes: 1,
  });
  assert.equal(r.state, "ok");
  assert.deepEqual(r.resource, { kind: "pod", id: pod.id });

  const edge = t.platform.state<Edge>("edge");
  const answers = await Promise.all(Array.from({ length: 5 }, () => viaEdge(edge.port!, pod.url, "/cgi-bin/health")));
  assert.deepEqual(
    answers.map((a) => a.status),
    [500, 500, 500, 500, 500],
  );
  await edge.stats.flush();

  const t0 = Date.now();
  await evaluate(t0);
  let now = await rule(r.id);
  assert.equal(now.state, "pending", JSON.stringify(now));
  assert.equal(now.last_value, 5);
  await evaluate(t0 + 30_000);
  assert.equal((await rule(r.id)).state, "pending");
  await evaluate(t0 + MINUTE); // held for 1 minute: fires
  now = await rule(r.id);
  assert.equal(now.state, "firing");
  assert.equal(now.state_since, new Date(t0 + MINUTE).toISOString());
  await evaluate(t0 + 90_000); // still above: no second firing
  // the 500s have left the 5-minute window: the condition is false, but it resolves only after for_minutes of that
  await evaluate(t0 + 10 * MINUTE);
  now = await rule(r.id);
  assert.equal(now.state, "firing");
  assert.equal(now.last_value, 0);
  assert.equal(now.clearing_since, new Date(t0 + 10 * MINUTE).toISOString());
  await evaluate(t0 + 10 * MINUTE + 30_000);
  assert.equal((await rule(r.id)).state, "firing");
  await evaluate(t0 + 11 * MINUTE);
  assert.equal((await rule(r.id)).state, "ok");
  await evaluate(t0 + 12 * MINUTE);

  const firings = (await call(t.app, { url: `/v1/alert-rules/five-hundreds/firings`, token: user.token })).json();
  assert.equal(firings.items.length, 1);
  assert.equal(firings.items[0].fired_value, 5);
  assert.equal(firings.items[0].resolved_reason, "condition cleared");
  assert.equal(firings.items[0].resolved_at, new Date(t0 + 11 * MINUTE).toISOString());

  const events = (await call(t.app, { url: `/v1/events?type=alert.*&resource_id=${r.id}`, token: user.token })).json()
    .items;
  assert.deepEqual(events.map((e: { type: string }) => e.type).sort(), ["alert.fired", "alert.resolved"]);
  const fired = events.find((e: { type: string }) => e.type === "alert.fired");
  assert.equal(fired.data.value, 5);
  assert.equal(fired.data.name, "five-hundreds");

  const ours = () => mails.filter((m) => m.subject.startsWith('Alert "five-hundreds"'));
  for (let i = 0; i < 100 && ours().length < 2; i++) await new Promise((res) => setTimeout(res, 100));
  assert.deepEqual(
    ours()
      .map((m) => m.subject)
      .sort(),
    ['Alert "five-hundreds" firing', 'Alert "five-hundreds" resolved'],
  );
  assert.ok(ours().every((m) => m.to === user.email.toLowerCase()));
  assert.match(ours().find((m) => m.subject.endsWith("firing"))!.text, /errors_5xx > 2 over 5 min/);
});

test("owner-wide and runtime rules read their series; a firing rule deleted resolves", async () => {
  await t.platform.state<MetricsState>("metrics").sampler.sample();
  const memory = await create({
    name: "memory-any",
    resource: { kind: "pod", id: pod.id },
    metric: "memory_bytes",
    comparison: ">",
    threshold: 0,
    for_minutes: 0,
  });
  const owner = await create({ name: "restarts-all", metric: "restarts", comparison: ">=", threshold: 1 });
  const traffic = await create({ name: "quiet", metric: "requests", comparison: ">=", threshold: 0, for_minutes: 0 });
  await evaluate(Date.now());
  assert.equal((await rule(memory.id)).state, "firing");
  assert.ok((await rule(memory.id)).last_value > 0);
  assert.equal((await rule(owner.id)).state, "ok");
  assert.equal((await rule(owner.id)).last_value, 0);
  assert.equal((await rule(traffic.id)).state, "firing");
  const del = await call(t.app, { method: "DELETE", url: `/v1/alert-rules/${memory.id}`, token: user.token });
  assert.equal(del.statusCode, 204, del.body);
  const events = (
    await call(t.app, { url: `/v1/events?type=alert.resolved&resource_id=${memory.id}`, token: user.token })
  ).json().items;
  assert.equal(events.length, 1);
  assert.equal(events[0].data.reason, "rule deleted");
  expectError(await call(t.app, { url: `/v1/alert-rules/${memory.id}`, token: user.token }), 404, "not_found");
  const list = (await call(t.app, { url: "/v1/alert-rules", token: user.token })).json().items;
  assert.deepEqual(list.map((x: { name: string }) => x.name).sort(), ["five-hundreds", "quiet", "restarts-all"]);
});

test("validation: metric and resource kind, comparison, window, references, names", async () => {
  const base = { name: "checked", metric: "errors_5xx", comparison: ">", threshold: 1 };
  expectError(await post({ ...base, metric: "disk" }), 400, "invalid_request");
  expectError(await post({ ...base, comparison: "==" }), 400, "invalid_request");
  expectError(await post({ ...base, window_minutes: 0 }), 400, "invalid_request");
  expectError(await post({ ...base, for_minutes: 1441 }), 400, "invalid_request");
  expectError(await post({ ...base, threshold: -1 }), 400, "invalid_request");
  expectError(await post({ ...base, metric: "error_rate_percent", threshold: 150 }), 400, "invalid_request");
  expectError(await post({ ...base, name: "Bad Name" }), 400, "bad_slug");
  // sites have traffic series only: checked before the site is looked up
  const cpu = await post({ ...base, metric: "cpu_percent", resource: { kind: "site", id: "any-site" } });
  expectError(cpu, 400, "bad_alert_metric");
  assert.match(cpu.json().error.message, /cpu_percent has no series for a static site/);
  const missing = await post({ ...base, resource: { kind: "pod", id: "no-such-pod" } });
  expectError(missing, 404, "not_found");
  assert.match(missing.json().error.message, /pod "no-such-pod"/);
  // a pod is not a pod group
  expectError(await post({ ...base, resource: { kind: "pod_group", id: pod.id } }), 404, "not_found");
  const site = await post({ ...base, resource: { kind: "site", id: "no-such-site" } });
  expectError(site, 404, "not_found");
  assert.match(site.json().error.message, /static site "no-such-site"/);
  // another account's pod is not found either
  const other = await signup(t.app);
  expectError(await post({ ...base, resource: { kind: "pod", id: pod.id } }, other.token), 404, "not_found");
  expectError(await post({ ...base, name: "five-hundreds" }), 409, "slug_taken");
  const patch = await call(t.app, {
    method: "PATCH",
    url: "/v1/alert-rules/five-hundreds",
    token: user.token,
    body: { metric: "cpu_percent", resource: null },
  });
  assert.equal(patch.statusCode, 200, patch.body);
  assert.equal(patch.json().resource, null);
  assert.equal(patch.json().state, "ok");
});

test("organization: members create company rules and change only theirs; admins change all", async () => {
  const org = await makeOrg(t, { admins: 1, members: 2 });
  const [m1, m2] = org.members;
  const created = await post(
    { name: "org-errors", metric: "errors_5xx", comparison: ">", threshold: 10 },
    m1.token,
    ORG,
  );
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  const as = (token: string, method: "GET" | "PATCH" | "DELETE", body?: unknown) =>
    call(t.app, { method, url: `/v1/alert-rules/${id}`, token, headers: ORG, body });
  assert.equal((await as(m2.token, "GET")).statusCode, 200);
  expectError(await as(m2.token, "PATCH", { threshold: 1 }), 403, "forbidden_role");
  expectError(await as(m2.token, "DELETE"), 403, "forbidden_role");
  const byAdmin = await as(org.admins[0].token, "PATCH", { threshold: 20 });
  assert.equal(byAdmin.statusCode, 200, byAdmin.body);
  assert.equal(byAdmin.json().threshold, 20);
  // the member's personal context and outsiders do not see it
  expectError(await call(t.app, { url: `/v1/alert-rules/${id}`, token: m1.token }), 404, "not_found");
  expectError(await call(t.app, { url: `/v1/alert-rules/${id}`, token: org.outsider.token }), 404, "not_found");
  assert.equal((await as(m1.token, "DELETE")).statusCode, 204);
});
