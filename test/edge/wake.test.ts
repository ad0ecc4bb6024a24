/**
 * Wake on request across edge processes (issue 30): two platforms over one store, each with its own edge, get the
 * first requests for one idle-stopped pod at the same moment. The wake is recorded in the store once (the first
 * edge's transaction starts it, the other finds it under way and waits for the same start), and every request on
 * both edges is answered by the one fresh replica.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import type { AppsState } from "../../src/apps/module.js";
import { createAppsTestApp, createPod, waitPod } from "../apps/lib.js";
import { request } from "./lib.js";

const DOMAIN = "apps.wake.test";
const env = { APPS_DOMAIN: DOMAIN, APPS_IDLE_MIN_SECONDS: "1" };

let one: TestApp;
let two: TestApp;
let user: { token: string; id: string };

before(async () => {
  one = await createAppsTestApp({ env });
  two = await createAppsTestApp({ env, databaseUrl: one.url });
  user = await signup(one.app);
});

after(async () => {
  if (one && user)
    for (const p of (await call(one.app, { url: "/v1/pods", token: user.token })).json())
      await call(one.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
  await new Promise((r) => setTimeout(r, 1500));
  await two?.close();
  await one?.close();
});

test("first requests on two edges over one store wake an idle pod once, and all are answered", async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const pod = await createPod(one, user.token, { name: "two-edges", image, port: 8080, idle_stop_seconds: 1 });
  await waitPod(one, user.token, pod.id, (p) => p.state === "running" && p.ready);
  await new Promise((r) => setTimeout(r, 1300));
  // the sweep may run on any process: here on the second
  await two.platform.state<AppsState>("apps").idle.sweep();
  const stopped = await waitPod(one, user.token, pod.id, (p) => p.state === "stopped");
  assert.equal(stopped.desired_state, "idle_stopped");

  const edges = [one, two].map((t) => t.platform.state<Edge>("edge"));
  const asked = edges.map((e) => e.waker!.asked);
  const host = `${pod.slug}.${DOMAIN}`;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => request(edges[i % 2].port!, host)));
  assert.deepEqual(
    answers.map((a) => `${a.status} ${a.body.trim()}`),
    Array(20).fill("200 v1"),
  );
  // each edge asked at most once (its requests share one wait); the store recorded one start
  const askedNow = edges.map((e, i) => e.waker!.asked - asked[i]);
  assert.ok(askedNow.every((n) => n <= 1) && askedNow.some((n) => n === 1), JSON.stringify(askedNow));
  const { rows } = await one.db.query<{ n: number }>("SELECT wakes AS n FROM pods WHERE id = $1", [pod.id]);
  assert.equal(rows[0].n, 1);
  const awake = (await call(two.app, { url: `/v1/pods/${pod.id}`, token: user.token })).json();
  assert.deepEqual([awake.desired_state, awake.generation], ["running", stopped.generation]);
});
