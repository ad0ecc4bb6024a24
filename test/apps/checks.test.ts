/**
 * Issue 29, declared checks on real containers behind the real edge: a new version whose readiness path answers
 * 500 never takes traffic and is rolled back by itself (the old one serves throughout); a liveness failure
 * restarts the replica; bad checks are refused with a clear error.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, type TestApp } from "../helpers/app.js";
import { createPod, waitPod } from "./lib.js";
import { command, edgeReady, setup, teardown, viaEdge } from "./checks-lib.js";

let t: TestApp;
let token: string;
let image: string;
let edgePort: number;

before(async () => {
  const s = await setup("apps.checks.test");
  ({ t, image, edgePort } = s);
  token = s.user.token;
});
after(() => teardown(t, token));

const readiness = { type: "http", path: "/cgi-bin/health", interval_seconds: 0.5, failure_threshold: 2 } as const;

test("a version answering 500 on its readiness path never takes traffic and is rolled back", async () => {
  const pod = await createPod(t, token, {
    name: "ready-500",
    image,
    port: 8080,
    command: command({ body: "v1" }),
    checks: { readiness },
    deploy: { deadline_seconds: 4, stop_grace_seconds: 2 },
  });
  assert.deepEqual(pod.checks, { readiness });
  await waitPod(t, token, pod.id, (p) => p.state === "running" && p.check_status.readiness?.state === "passing");
  await edgeReady(edgePort, pod.url);

  const patched = await call(t.app, {
    method: "PATCH",
    url: `/v1/pods/${pod.id}`,
    token,
    body: { command: command({ body: "v2", health: 500 }) },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.equal(patched.json().release, 2);
  // while the bad version runs and after: only v1 answers through the edge
  const answers = new Set<string>();
  let rolled: any;
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const r = await viaEdge(edgePort, pod.url);
    answers.add(`${r.status} ${r.body.trim()}`);
    rolled = (await call(t.app, { url: `/v1/pods/${pod.id}`, token })).json();
    if (rolled.rollout.state === "rollback" && rolled.serving_generation === rolled.generation) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(rolled.rollout.state, "rollback", JSON.stringify(rolled));
  assert.deepEqual([...answers], ["200 v1"]);
  assert.equal(rolled.release, 1);
  assert.equal(rolled.rollout.rollback.from_release, 2);
  assert.match(rolled.rollout.rollback.reason, /not ready within 4 s: GET \/cgi-bin\/health answered 500/);
  assert.ok(Array.isArray(rolled.rollout.rollback.log_lines));
  assert.equal((await viaEdge(edgePort, pod.url)).body, "v1\n");

  const releases = (await call(t.app, { url: `/v1/pods/${pod.id}/releases`, token })).json();
  assert.deepEqual(
    releases.map((r: any) => [r.number, r.outcome, r.changed]),
    [
      [2, "rolled_back", ["command"]],
      [1, "serving", []],
    ],
  );
  assert.match(releases[0].outcome_reason, /answered 500/);
});

test("a liveness failure restarts the replica, with the reason on the pod", async () => {
  const pod = await createPod(t, token, {
    name: "liveness",
    image,
    port: 8080,
    command: command({ body: "alive", aliveFor: 2 }),
    checks: { liveness: { type: "http", path: "/alive", interval_seconds: 0.5, failure_threshold: 2 } },
    deploy: { stop_grace_seconds: 1 },
  });
  const restarted = await waitPod(t, token, pod.id, (p) => p.restart_count >= 1, 30_000);
  assert.equal(restarted.check_status.liveness.state, "failing");
  assert.match(restarted.check_status.liveness.last_failure.reason, /GET \/alive answered 404/);
  // it comes back and serves again
  await waitPod(t, token, pod.id, (p) => p.state === "running" && p.serving_generation === p.generation);
});

test("checks that cannot work are refused with a clear error", async () => {
  const noPort = await call(t.app, {
    method: "POST",
    url: "/v1/pods",
    token,
    body: { name: "no-port", image, checks: { readiness: { type: "tcp" } } },
  });
  expectError(noPort, 400, "invalid_request");
  assert.match(noPort.json().error.message, /checks.readiness: a tcp check needs the pod's port/);
  const badType = await call(t.app, {
    method: "POST",
    url: "/v1/pods",
    token,
    body: { name: "bad-type", image, port: 8080, checks: { readiness: { type: "grpc" } } },
  });
  expectError(badType, 400, "invalid_request");
});

test("templates and groups carry checks to the pods they make", async () => {
  const checks = { readiness: { type: "http", path: "/cgi-bin/health", interval_seconds: 0.5 } };
  const tpl = await call(t.app, {
    method: "POST",
    url: "/v1/pod-templates",
    token,
    body: { name: "checked", image, port: 8080, command: command({ body: "tpl" }), checks },
  });
  assert.equal(tpl.statusCode, 201, tpl.body);
  assert.deepEqual(tpl.json().checks, checks);
  const fromTemplate = await createPod(t, token, { template: "checked", name: "from-tpl" });
  assert.deepEqual(fromTemplate.checks, checks);

  const group = await call(t.app, {
    method: "POST",
    url: "/v1/pod-groups",
    token,
    body: {
      name: "checked-group",
      image,
      port: 8080,
      command: command({ body: "g" }),
      checks,
      replica_min: 1,
      replica_max: 1,
    },
  });
  assert.equal(group.statusCode, 201, group.body);
  assert.deepEqual(group.json().checks, checks);
  const member = group.json().replicas[0];
  const got = await waitPod(t, token, member.id, (p) => p.check_status.readiness?.state === "passing");
  assert.deepEqual(got.checks, checks);
  await call(t.app, { method: "DELETE", url: `/v1/pod-groups/${group.json().id}`, token });
});
