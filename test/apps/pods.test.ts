import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { call, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { containersOf, createAppsTestApp, createPod, httpGet, waitPod } from "./lib.js";

const run = promisify(execFile);

/** Pods on real podman containers: lifecycle, rolling update, logs, exec, crash back-off, errors and scopes. */
describe("pods API on real containers", () => {
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
    for (const p of (await call(t.app, { url: "/v1/pods", token: user.token })).json())
      await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: user.token });
    await new Promise((r) => setTimeout(r, 1500));
    await t.close();
  });

  test("a pod serves its image on loopback, lists, logs, execs; an update rolls to the new image", async () => {
    const pod = await createPod(t, user.token, { name: "web-app", image: v1, port: 8080, env: { GREETING: "hi" } });
    assert.equal(pod.state, "creating");
    assert.match(pod.url, new RegExp(`^http://${pod.slug}\\.apps\\.`));
    const running = await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    assert.match(running.address, /^127\.0\.0\.1:\d+$/);
    assert.equal((await httpGet(`http://${running.address}/`)).body, "v1\n");
    const list = (await call(t.app, { url: "/v1/pods", token: user.token })).json();
    assert.deepEqual(
      list.map((p: any) => p.id),
      [pod.id],
    );
    assert.deepEqual(running.env, { GREETING: "hi" });

    const exec = await call(t.app, {
      method: "POST",
      url: `/v1/pods/${pod.slug}/exec`,
      token: user.token,
      body: { command: ["sh", "-c", "echo $GREETING; echo oops >&2; exit 4"] },
    });
    assert.equal(exec.statusCode, 200, exec.body);
    assert.deepEqual(
      { code: exec.json().exit_code, out: exec.json().stdout, err: exec.json().stderr },
      { code: 4, out: "hi\n", err: "oops\n" },
    );
    const logs = await call(t.app, { url: `/v1/pods/${pod.id}/logs?tail=5`, token: user.token });
    assert.equal(logs.statusCode, 200);
    assert.ok(Array.isArray(logs.json().lines));

    const patched = await call(t.app, {
      method: "PATCH",
      url: `/v1/pods/${pod.id}`,
      token: user.token,
      body: { image: v2 },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().generation, 2);
    const updated = await waitPod(t, user.token, pod.id, (p) => p.serving_generation === 2 && p.state === "running");
    assert.equal((await httpGet(`http://${updated.address}/`)).body, "v2\n");
    // the old replica goes once the new one serves: one container left
    const deadline = Date.now() + 10_000;
    while ((await containersOf(pod.id)).length !== 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal((await containersOf(pod.id)).length, 1);
  });

  test("stop removes the containers, start brings the pod back, delete removes it", async () => {
    const pod = await createPod(t, user.token, { name: "stopper", image: v1, port: 8080 });
    await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    const stop = await call(t.app, { method: "POST", url: `/v1/pods/${pod.id}/stop`, token: user.token });
    assert.equal(stop.statusCode, 202);
    const stopped = await waitPod(t, user.token, pod.id, (p) => p.state === "stopped");
    assert.equal(stopped.address, null);
    assert.equal((await containersOf(pod.id)).length, 0);
    await call(t.app, { method: "POST", url: `/v1/pods/${pod.id}/start`, token: user.token });
    const again = await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    assert.equal((await httpGet(`http://${again.address}/`)).body, "v1\n");
    const del = await call(t.app, { method: "DELETE", url: `/v1/pods/${pod.id}`, token: user.token });
    assert.equal(del.statusCode, 202);
    await waitPod(t, user.token, pod.id, (p) => p.state === "removed");
    assert.equal((await containersOf(pod.id)).length, 0);
    const list = (await call(t.app, { url: "/v1/pods", token: user.token })).json();
    assert.ok(!list.some((p: any) => p.id === pod.id), "a removed pod is not listed");
  });

  test("delete while starting stops the start: the container goes and no conmon or runc of it is left", async () => {
    // port 9999: httpd listens on 8080, so the pod never answers and stays starting (health time-out: 60 s)
    const pod = await createPod(t, user.token, { name: "never-ready", image: v1, port: 9999 });
    const [c] = await (async () => {
      for (let i = 0; i < 200; i++) {
        const cs = await containersOf(pod.id);
        if (cs[0]?.State === "running") return cs;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail("the pod's container never ran");
    })();
    assert.equal((await call(t.app, { url: `/v1/pods/${pod.id}`, token: user.token })).json().state, "creating");
    const del = await call(t.app, { method: "DELETE", url: `/v1/pods/${pod.id}`, token: user.token });
    assert.equal(del.statusCode, 202);
    await waitPod(t, user.token, pod.id, (p) => p.state === "removed", 20_000);
    assert.equal((await containersOf(pod.id)).length, 0);
    // conmon exits a moment after its container is removed: a process still there after 5 s is one left behind
    const deadline = Date.now() + 5000;
    while ((await run("ps", ["-eo", "args"])).stdout.includes(c!.Id)) {
      assert.ok(Date.now() < deadline, "no process of the container is left");
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  test("a container that keeps crashing is restarted with back-off, then failed with the reason", async () => {
    const pod = await createPod(t, user.token, {
      name: "crasher",
      image: v1,
      command: ["sh", "-c", "echo dying; exit 3"],
    });
    const failed = await waitPod(t, user.token, pod.id, (p) => p.state === "failed", 60_000);
    assert.match(failed.state_reason, /exited with code 3/);
    assert.match(failed.state_reason, /dying/);
    assert.ok(failed.restart_count >= 3, `restarts: ${failed.restart_count}`);
    assert.equal((await containersOf(pod.id)).length, 0);
  });

  test("bad input and unavailable capacity answer in the error body", async () => {
    expectError(
      await call(t.app, { method: "POST", url: "/v1/pods", token: user.token, body: { name: "x", image: v1 } }),
      400,
      "bad_slug",
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/pods",
        token: user.token,
        body: { name: "sized", image: v1, size: "huge" },
      }),
      400,
      "bad_size",
    );
    expectError(
      await call(t.app, { method: "POST", url: "/v1/pods", token: user.token, body: { name: "imgless" } }),
      400,
      "invalid_request",
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/pods",
        token: user.token,
        body: { name: "badimg", image: "UPPER CASE" },
      }),
      400,
      "bad_image",
    );
    // no GPU on this host: a GPU SKU from /v1/gpus cannot be provisioned
    const gpu = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: user.token,
      body: { name: "gpu-app", image: v1, size: "gpu-l4" },
    });
    expectError(gpu, 503, "provision_failed");
    assert.match(gpu.json().error.message, /GPU/);
    // a paid size without balance
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/pods",
        token: user.token,
        body: { name: "paid-app", image: v1, size: "micro" },
      }),
      402,
      "insufficient_funds",
    );
    const taken = await createPod(t, user.token, { name: "taken", slug: "taken-slug", image: v1 });
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/pods",
        token: user.token,
        body: { name: "taken2", slug: "taken-slug", image: v1 },
      }),
      409,
      "slug_taken",
    );
    expectError(await call(t.app, { url: "/v1/pods/nope-nope", token: user.token }), 404, "not_found");
    const other = await signup(t.app);
    expectError(await call(t.app, { url: `/v1/pods/${taken.id}`, token: other.token }), 404, "not_found");
  });

  test("scopes: read keys cannot change pods; instance keys see only their pod", async () => {
    const a = await createPod(t, user.token, { name: "scoped-a", image: v1 });
    const b = await createPod(t, user.token, { name: "scoped-b", image: v1 });
    const reader = await scopedKey(t.app, user.token, ["pods:read"]);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/pods", token: reader, body: { name: "nope", image: v1 } }),
      403,
      "scope_insufficient",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/pods/${a.id}/restart`, token: reader }),
      403,
      "scope_insufficient",
    );
    const only = await scopedKey(t.app, user.token, [`pods:write:${a.id}`]);
    const list = (await call(t.app, { url: "/v1/pods", token: only })).json();
    assert.deepEqual(
      list.map((p: any) => p.id),
      [a.id],
    );
    expectError(await call(t.app, { url: `/v1/pods/${b.id}`, token: only }), 403, "scope_insufficient");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/pods", token: only, body: { name: "inst", image: v1 } }),
      403,
      "scope_insufficient",
    );
    assert.equal((await call(t.app, { url: `/v1/pods/${a.slug}`, token: only })).statusCode, 200);
  });
});
