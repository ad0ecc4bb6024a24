/**
 * Issue 29, safe rollouts on real containers behind the real edge: a version that crashes 5 s after it started
 * is rolled back (the old one never stopped serving); under steady load a rollout and a rollback each lose 0
 * requests; a slow request in flight at the switch completes on the old replica before it is stopped.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, type TestApp } from "../helpers/app.js";
import { containersOf, createPod, waitPod } from "./lib.js";
import { command, edgeReady, load, setup, teardown, viaEdge } from "./checks-lib.js";

let t: TestApp;
let token: string;
let image: string;
let edgePort: number;

before(async () => {
  const s = await setup("apps.rollout.test");
  ({ t, image, edgePort } = s);
  token = s.user.token;
});
after(() => teardown(t, token));

const patch = (id: string, body: Record<string, unknown>) =>
  call(t.app, { method: "PATCH", url: `/v1/pods/${id}`, token, body });

test("a version that crashes 5 s after start is rolled back; the old one serves throughout", async () => {
  const pod = await createPod(t, token, { name: "crashy", image, port: 8080, command: command({ body: "v1" }) });
  await waitPod(t, token, pod.id, (p) => p.state === "running");
  await edgeReady(edgePort, pod.url);
  const traffic = load(edgePort, pod.url, 20_000, 2);
  // readiness must hold 8 checks a second apart: the crash at 5 s comes first
  const res = await patch(pod.id, {
    command: command({ body: "v2", crashAfter: 5 }),
    checks: { readiness: { type: "tcp", interval_seconds: 1, success_threshold: 8 } },
  });
  assert.equal(res.statusCode, 200, res.body);
  const rolled = await waitPod(
    t,
    token,
    pod.id,
    (p) => p.rollout.state === "rollback" && p.serving_generation === p.generation,
    40_000,
  );
  await traffic.stop();
  assert.match(rolled.rollout.rollback.reason, /exited with code 3 before it was ready/);
  assert.equal(rolled.release, 1);
  assert.equal(rolled.checks, null, "release 1's checks are back");
  assert.deepEqual(traffic.lost, []);
  assert.deepEqual(Object.keys(traffic.seen), ["v1"]);
});

test("under steady load a rollout and a rollback each lose 0 requests", async (ctx) => {
  const pod = await createPod(t, token, {
    name: "steady",
    image,
    port: 8080,
    command: command({ body: "v1" }),
    deploy: { stop_grace_seconds: 2 },
  });
  await waitPod(t, token, pod.id, (p) => p.state === "running");
  await edgeReady(edgePort, pod.url);

  const rollout = load(edgePort, pod.url);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await patch(pod.id, { command: command({ body: "v2" }) })).statusCode, 200);
  await waitPod(t, token, pod.id, (p) => p.serving_generation === 2 && p.release === 2);
  while ((await containersOf(pod.id)).length > 1) await new Promise((r) => setTimeout(r, 100));
  await rollout.stop();
  ctx.diagnostic(`rollout: ${rollout.total} requests ${JSON.stringify(rollout.seen)}, lost ${rollout.lost.length}`);
  assert.deepEqual(rollout.lost, []);
  assert.ok(rollout.seen.v1! > 0 && rollout.seen.v2! > 0);

  const rollback = load(edgePort, pod.url);
  await new Promise((r) => setTimeout(r, 200));
  const back = await call(t.app, { method: "POST", url: `/v1/pods/${pod.id}/rollback`, token, body: { release: 1 } });
  assert.equal(back.statusCode, 202, back.body);
  await waitPod(t, token, pod.id, (p) => p.serving_generation === p.generation && p.release === 3);
  while ((await containersOf(pod.id)).length > 1) await new Promise((r) => setTimeout(r, 100));
  await rollback.stop();
  ctx.diagnostic(`rollback: ${rollback.total} requests ${JSON.stringify(rollback.seen)}, lost ${rollback.lost.length}`);
  assert.deepEqual(rollback.lost, []);
  assert.equal((await viaEdge(edgePort, pod.url)).body, "v1\n");
});

test("a slow request in flight at the switch completes on the old replica", async () => {
  const pod = await createPod(t, token, {
    name: "slow",
    image,
    port: 8080,
    command: command({ body: "v1", slowSeconds: 3 }),
    deploy: { stop_grace_seconds: 1 },
  });
  await waitPod(t, token, pod.id, (p) => p.state === "running");
  await edgeReady(edgePort, pod.url);
  const started = Date.now();
  const slow = viaEdge(edgePort, pod.url, "/cgi-bin/slow");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await patch(pod.id, { command: command({ body: "v2" }) })).statusCode, 200);
  await waitPod(t, token, pod.id, (p) => p.serving_generation === 2);
  assert.deepEqual(await slow, { status: 200, body: "slow-v1\n" });
  assert.ok(Date.now() - started >= 3000);
  // and the old replica goes once it is done
  const until = Date.now() + 15_000;
  while ((await containersOf(pod.id)).length > 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await containersOf(pod.id)).length, 1);
});
