import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { containersOf, createAppsTestApp, createPod, waitPod } from "./lib.js";

/** The legacy deployment endpoints: a pod's rollouts as "deployments", with metrics and a sample (deprecated). */
describe("legacy deployment metrics and sample", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let v1: string;
  let v2: string;
  before(async () => {
    [v1, v2] = [await testImage("TEST_IMAGE_HTTPD_V1"), await testImage("TEST_IMAGE_HTTPD_V2")];
    t = await createAppsTestApp();
    user = await signup(t.app);
  });
  after(async () => {
    await t?.close(); // removes every container of its host
  });

  const get = (token: string, url: string) => call(t.app, { url, token });
  const chatty = ["sh", "-c", "for i in 1 2 3; do echo hello-$i; done; exec httpd -f -p 8080 -h /www"];

  test("metrics and sample of the serving rollout; an earlier rollout answers replaced; scopes; other owners", async () => {
    const pod = await createPod(t, user.token, { name: "legacy-web", image: v1, port: 8080, command: chatty });
    await waitPod(t, user.token, pod.id, (p) => p.state === "running");

    const reader = await scopedKey(t.app, user.token, ["pods:read"]);
    const res = await get(reader, `/v1/deployments/${pod.id}/metrics`);
    assert.equal(res.statusCode, 200, res.body);
    const m = res.json();
    assert.equal(m.pod_id, pod.id);
    assert.equal(m.generation, 1);
    assert.equal(m.image, v1);
    assert.equal(m.state, "serving");
    assert.equal(m.restarts, 0);
    assert.equal(typeof m.cpu_percent, "number");
    assert.ok(m.cpu_percent >= 0);
    assert.ok(m.memory_bytes > 0, `memory: ${m.memory_bytes}`);
    assert.equal(m.memory_limit_bytes, 256 * 1024 * 1024, "nano: 256 MiB");
    assert.ok(Math.abs(Date.parse(m.sampled_at) - Date.now()) < 60_000);
    const first = m.deployment_id;

    const s = (await get(reader, `/v1/deployments/${pod.slug}/sample`)).json();
    assert.equal(s.deployment_id, first, "a slug names the newest rollout too");
    assert.equal(s.state, "serving");
    assert.equal(s.reason, "create");
    assert.ok(s.serving_at);
    assert.deepEqual(
      s.log_lines.filter((l: string) => l.startsWith("hello-")),
      ["hello-1", "hello-2", "hello-3"],
    );

    // an update is a new rollout; the first one is replaced and has no container to sample
    const patched = await call(t.app, {
      method: "PATCH",
      url: `/v1/pods/${pod.id}`,
      token: user.token,
      body: { image: v2 },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    await waitPod(t, user.token, pod.id, (p) => p.serving_generation === 2 && p.state === "running");
    const newest = (await get(user.token, `/v1/deployments/${pod.id}/metrics`)).json();
    assert.equal(newest.generation, 2);
    assert.equal(newest.image, v2);
    assert.equal(newest.state, "serving");
    assert.notEqual(newest.deployment_id, first);
    // the old replica drains briefly, then goes
    const deadline = Date.now() + 10_000;
    while ((await containersOf(pod.id)).length !== 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const old = (await get(user.token, `/v1/deployments/${first}/metrics`)).json();
    assert.deepEqual(
      { generation: old.generation, image: old.image, state: old.state, cpu: old.cpu_percent, mem: old.memory_bytes },
      { generation: 1, image: v1, state: "replaced", cpu: null, mem: null },
    );
    const oldSample = (await get(user.token, `/v1/deployments/${first}/sample`)).json();
    assert.equal(oldSample.state, "replaced");
    assert.deepEqual(oldSample.log_lines, []);

    // scopes and owners
    const other = await signup(t.app);
    for (const ref of [pod.id, first]) {
      expectError(await get(other.token, `/v1/deployments/${ref}/metrics`), 404, "not_found");
      expectError(await get(other.token, `/v1/deployments/${ref}/sample`), 404, "not_found");
    }
    const wrongScope = await scopedKey(t.app, user.token, ["databases:read"]);
    expectError(await get(wrongScope, `/v1/deployments/${pod.id}/metrics`), 403, "scope_insufficient");
    expectError(await get(wrongScope, `/v1/deployments/${pod.id}/sample`), 403, "scope_insufficient");
    expectError(await call(t.app, { url: `/v1/deployments/${pod.id}/metrics` }), 401, "auth_required");
    expectError(
      await get(user.token, "/v1/deployments/00000000-0000-4000-8000-000000000000/metrics"),
      404,
      "not_found",
    );
  });

  test("a crashing rollout counts its restarts", async () => {
    const pod = await createPod(t, user.token, { name: "legacy-crash", image: v1, command: ["sh", "-c", "exit 5"] });
    await waitPod(t, user.token, pod.id, (p) => p.state === "failed");
    const m = (await get(user.token, `/v1/deployments/${pod.id}/metrics`)).json();
    assert.equal(m.state, "failed");
    assert.ok(m.restarts >= 3, `restarts: ${m.restarts}`);
    assert.equal(m.cpu_percent, null);
  });

  test("the OpenAPI document marks both operations deprecated", async () => {
    const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
    for (const op of ["metrics", "sample"]) {
      const entry = doc.paths[`/v1/deployments/{id}/${op}`]?.get;
      assert.ok(entry, `${op} is documented`);
      assert.equal(entry.deprecated, true, op);
    }
    // and nothing else of the apps is
    assert.equal(doc.paths["/v1/pods"].get.deprecated ?? false, false);
  });
});
