import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createPod } from "../apps/lib.js";
import { createBuild, createBuildsTestApp } from "./lib.js";

/**
 * The scope rules (spec, Authentication 5 and 8): pod scopes do not cover builds, so a pods-only key updating
 * an app from source fails at the build step with 403 naming builds:write; a builds key updating an app needs
 * pods:write for it too; builds:*:<id> keys see and act on their build only and cannot create.
 */
describe("builds: scopes", () => {
  let t: TestApp;
  let alice: { token: string; id: string };
  let pod: any;

  before(async () => {
    t = await createBuildsTestApp();
    alice = await signup(t.app);
    pod = await createPod(t, alice.token, {
      name: "scoped-web",
      image: await testImage("TEST_IMAGE_HTTPD_V1"),
      port: 8080,
    });
  });
  after(async () => {
    await call(t.app, { method: "DELETE", url: `/v1/pods/${pod.id}`, token: alice.token });
    await new Promise((r) => setTimeout(r, 500));
    await t?.close();
  });

  test("a pods-only key updating an app from source gets 403 scope_insufficient naming builds:write", async () => {
    const key = await scopedKey(t.app, alice.token, ["pods:*"]);
    const res = await call(t.app, { method: "POST", url: "/v1/builds", token: key, body: { app: pod.slug } });
    expectError(res, 403, "scope_insufficient");
    assert.match(res.json().error.message, /builds:write/);
    // the key still reads the pod (pod scopes cover status, logs and the like)
    assert.equal((await call(t.app, { url: `/v1/pods/${pod.id}`, token: key })).statusCode, 200);
    assert.equal((await call(t.app, { url: "/v1/builds", token: key })).statusCode, 403);
  });

  test("a builds-only key may build, but updating an app needs pods:write for it", async () => {
    const key = await scopedKey(t.app, alice.token, ["builds:write"]);
    const res = await call(t.app, { method: "POST", url: "/v1/builds", token: key, body: { app: pod.slug } });
    expectError(res, 403, "scope_insufficient");
    assert.match(res.json().error.message, /pods:write/);
    await createBuild(t, key); // no app: a plain build is fine
    const both = await scopedKey(t.app, alice.token, ["builds:write", `pods:write:${pod.slug}`]);
    const made = await createBuild(t, both, { app: pod.id });
    assert.deepEqual(made.app, { kind: "pod", id: pod.id, slug: pod.slug });
    const other = await scopedKey(t.app, alice.token, ["builds:write", "pods:write:someone-else"]);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/builds", token: other, body: { app: pod.slug } }),
      403,
      "scope_insufficient",
    );
  });

  test("an unknown app is 404; another owner's app is unknown", async () => {
    expectError(
      await call(t.app, { method: "POST", url: "/v1/builds", token: alice.token, body: { app: "no-such-app" } }),
      404,
      "not_found",
    );
    const bob = await signup(t.app);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/builds", token: bob.token, body: { app: pod.id } }),
      404,
      "not_found",
    );
  });

  test("builds:*:<id> keys act on their build only, see only it, and cannot create", async () => {
    const mine = await createBuild(t, alice.token);
    const other = await createBuild(t, alice.token);
    const key = await scopedKey(t.app, alice.token, [`builds:*:${mine.id}`]);
    assert.equal((await call(t.app, { url: `/v1/builds/${mine.id}`, token: key })).statusCode, 200);
    expectError(await call(t.app, { url: `/v1/builds/${other.id}`, token: key }), 403, "scope_insufficient");
    const listed = (await call(t.app, { url: "/v1/builds", token: key })).json();
    assert.deepEqual(
      listed.map((b: any) => b.id),
      [mine.id],
    );
    expectError(await call(t.app, { method: "POST", url: "/v1/builds", token: key }), 403, "scope_insufficient");
    const ev = await call(t.app, {
      method: "POST",
      url: `/v1/builds/${mine.id}/events`,
      token: key,
      body: { phase: "pack", message: "packed" },
    });
    assert.equal(ev.statusCode, 201, ev.body);
    const readOnly = await scopedKey(t.app, alice.token, [`builds:read:${mine.id}`]);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/builds/${mine.id}/cancel`, token: readOnly }),
      403,
      "scope_insufficient",
    );
    // another owner sees nothing
    const bob = await signup(t.app);
    expectError(await call(t.app, { url: `/v1/builds/${mine.id}`, token: bob.token }), 404, "not_found");
  });
});

test("without buildah the build endpoints answer 503 builder_unavailable with the install command", async () => {
  const t = await createTestApp({ env: { BUILDAH_BIN: "/nonexistent/buildah" } });
  try {
    const { token } = await signup(t.app);
    const res = await call(t.app, { method: "POST", url: "/v1/builds", token });
    expectError(res, 503, "builder_unavailable");
    assert.match(res.json().error.message, /apt-get install buildah/);
  } finally {
    await t.close();
  }
});
