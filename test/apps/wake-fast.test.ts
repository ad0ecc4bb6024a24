/**
 * The wake's short path (issue 30, src/apps/README.md "The wake"): the idle stop records the kept container's
 * published address, the wake starts that same container by name and routes to that address without listing or
 * inspecting it first, and fills in its network address afterwards. A woken pod whose start outlasts its idle time
 * is not stopped again by the sweep before it serves (its `ready` from before the stop proves nothing).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import type { AppsState } from "../../src/apps/module.js";
import { containersOf, createAppsTestApp, createPod, waitPod } from "./lib.js";
import { request } from "../edge/lib.js";

const DOMAIN = "apps.wake-fast.test";

let t: TestApp;
let user: { token: string; id: string };

before(async () => {
  t = await createAppsTestApp({ env: { APPS_DOMAIN: DOMAIN, APPS_IDLE_MIN_SECONDS: "1" } });
  user = await signup(t.app);
});

after(async () => {
  if (!t) return;
  for (const p of (await call(t.app, { url: "/v1/pods", token: user.token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
  await new Promise((r) => setTimeout(r, 1500));
  await t.close();
});

const idle = () => t.platform.state<AppsState>("apps").idle;
const row = async (id: string) =>
  (
    await t.db.query<{ address: string | null; kept_address: string | null; network_address: string | null }>(
      "SELECT address, kept_address, network_address FROM pods WHERE id = $1",
      [id],
    )
  ).rows[0];

async function idleStopped(id: string) {
  await new Promise((r) => setTimeout(r, 1200));
  assert.deepEqual(await idle().sweep(), [`pod:${id}`]);
  return waitPod(t, user.token, id, (p) => p.state === "stopped");
}

test("a wake starts the kept container at its recorded address; the sweep leaves a starting pod alone", async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const pod = await createPod(t, user.token, { name: "fast-wake", image, port: 8080, idle_stop_seconds: 1 });
  const running = await waitPod(t, user.token, pod.id, (p) => p.state === "running" && p.ready);
  const [container] = await containersOf(pod.id);

  await idleStopped(pod.id);
  const kept = await row(pod.id);
  assert.equal(kept.kept_address, running.address, "the published address is recorded at the idle stop");
  assert.equal(kept.address, null);

  // a start that outlasts the idle time: woken, its clock set back, swept before it serves: not stopped again
  assert.deepEqual(await idle().wake({ kind: "pod", id: pod.id }), { kind: "started" });
  await t.db.query("UPDATE pods SET awake_since = now() - interval '10 seconds' WHERE id = $1 AND state = 'stopped'", [
    pod.id,
  ]);
  assert.deepEqual(await idle().sweep(), [], "a woken pod that does not serve yet is not idle");

  const edgePort = t.platform.state<Edge>("edge").port!;
  const answer = await request(edgePort, `${pod.slug}.${DOMAIN}`);
  assert.equal(`${answer.status} ${answer.body.trim()}`, "200 v1");
  const awake = await waitPod(t, user.token, pod.id, (p) => p.state === "running" && p.ready);
  assert.equal(awake.address, running.address, "served at the kept address");
  assert.deepEqual(
    (await containersOf(pod.id)).map((c) => [c.Id, c.State]),
    [[container.Id, "running"]],
    "the same container, started again",
  );
  // described after the held requests went through: its network address (given anew at each start)
  const deadline = Date.now() + 10_000;
  while (!(await row(pod.id)).network_address && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok((await row(pod.id)).network_address, "network address recorded after the wake");
});
