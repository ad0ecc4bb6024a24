/**
 * Pods behind the edge on real containers: a pod answers at its `url` through the edge (the Host names it, the
 * edge's own port carries it), and a rolling update under continuous traffic loses no request and ends serving
 * the new image, switching once from the old image to the new one and never back (issues 10 and 11).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { call, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import { containersOf, createAppsTestApp, createPod, waitPod } from "./lib.js";

let t: TestApp;
let user: { token: string; id: string };
let edgePort: number;
let v1: string;
let v2: string;

before(async () => {
  [v1, v2] = [await testImage("TEST_IMAGE_HTTPD_V1"), await testImage("TEST_IMAGE_HTTPD_V2")];
  t = await createAppsTestApp({ env: { APPS_DOMAIN: "apps.rolling.test" } });
  user = await signup(t.app);
  edgePort = t.platform.state<Edge>("edge").port!;
});

after(async () => {
  for (const p of (await call(t.app, { url: "/v1/pods", token: user.token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
  await new Promise((r) => setTimeout(r, 1500));
  await t.close();
});

/** GET through the edge, with the Host of the pod's url. */
function viaEdge(url: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  const host = new URL(url).hostname;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port: edgePort, path: "/", headers: { host }, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
      res.on("error", reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error("timed out")));
    req.on("error", reject);
  });
}

test("a pod created through the API answers at its url through the edge", async () => {
  const pod = await createPod(t, user.token, { name: "edge-hello", image: v1, port: 8080 });
  assert.equal(new URL(pod.url).hostname, `${pod.slug}.apps.rolling.test`);
  // before its replica runs the edge knows it and says so
  const early = await viaEdge(pod.url);
  assert.ok(early.status === 503 || early.body === "v1\n", JSON.stringify(early));
  await waitPod(t, user.token, pod.id, (p) => p.state === "running");
  const deadline = Date.now() + 10_000;
  let got = await viaEdge(pod.url);
  while (got.status !== 200 && Date.now() < deadline) got = await viaEdge(pod.url);
  assert.deepEqual(got, { status: 200, body: "v1\n" });
  // deleted: gone from the edge within a second
  await call(t.app, { method: "DELETE", url: `/v1/pods/${pod.id}`, token: user.token });
  const gone = Date.now() + 15_000;
  while ((await viaEdge(pod.url)).status === 200 && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
  assert.notEqual((await viaEdge(pod.url)).status, 200);
});

test("a rolling update under continuous traffic: 0 failed requests, switches to v2 once and never back", async (ctx) => {
  const pod = await createPod(t, user.token, { name: "rolling", image: v1, port: 8080 });
  await waitPod(t, user.token, pod.id, (p) => p.state === "running");
  const ready = Date.now() + 2000;
  while ((await viaEdge(pod.url)).status !== 200 && Date.now() < ready) await new Promise((r) => setTimeout(r, 50));

  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const seen = { v1: 0, v2: 0 };
  const failures: string[] = [];
  // when each answer was asked for and arrived, and which version gave it (never go back: checked below)
  const answered: { from: number; to: number; version: "v1" | "v2" }[] = [];
  let stop = false;
  let total = 0;
  const LIMIT = 30_000; // bounded, whatever happens
  const worker = async () => {
    while (!stop && total < LIMIT) {
      total++;
      try {
        const from = performance.now();
        const r = await viaEdge(pod.url, agent);
        const version = r.status === 200 && (r.body === "v1\n" ? "v1" : r.body === "v2\n" ? "v2" : null);
        if (version) {
          seen[version]++;
          answered.push({ from, to: performance.now(), version });
        } else failures.push(`${r.status} ${r.body.slice(0, 80)}`);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  const traffic = Promise.all(Array.from({ length: 4 }, worker));
  await new Promise((r) => setTimeout(r, 300));

  const patched = await call(t.app, {
    method: "PATCH",
    url: `/v1/pods/${pod.id}`,
    token: user.token,
    body: { image: v2 },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  await waitPod(t, user.token, pod.id, (p) => p.serving_generation === 2 && p.state === "running");
  // the old replica is stopped and removed while the traffic goes on
  const deadline = Date.now() + 20_000;
  while ((await containersOf(pod.id)).length !== 1 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  assert.equal((await containersOf(pod.id)).length, 1);
  await new Promise((r) => setTimeout(r, 1000));
  const v2Before = seen.v2;
  await new Promise((r) => setTimeout(r, 500));
  stop = true;
  await traffic;
  agent.destroy();

  ctx.diagnostic(`requests: ${total} (v1 ${seen.v1}, v2 ${seen.v2}), failed ${failures.length}`);
  assert.deepEqual(failures, []);
  assert.ok(seen.v1 > 0 && seen.v2 > v2Before, JSON.stringify(seen));
  assert.ok(total < LIMIT, "the update finished before the traffic bound");
  // the switch is one-way: once a v2 answer has arrived, no request asked for after it is answered by v1
  const firstV2 = Math.min(...answered.filter((a) => a.version === "v2").map((a) => a.to));
  const back = answered.filter((a) => a.version === "v1" && a.from >= firstV2);
  const overlap = answered.filter((a) => a.version === "v1" && a.to > firstV2).length;
  ctx.diagnostic(`v1 answers still arriving after the first v2 (asked for before it): ${overlap}`);
  assert.equal(back.length, 0, `${back.length} requests asked for after the first v2 answer got v1`);
  // and it ends serving v2 only
  for (let i = 0; i < 10; i++) assert.equal((await viaEdge(pod.url)).body, "v2\n");
});
