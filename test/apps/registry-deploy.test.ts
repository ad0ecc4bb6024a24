import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { Podman, run } from "../registry/lib.js";
import { createAppsTestApp, createPod, httpGet, waitPod } from "./lib.js";

/**
 * Pods from the platform's own registry, with the host's local store closed (APPS_ALLOW_LOCAL_IMAGES=0): an
 * image pushed to the owner's namespace deploys with no user credentials (the platform mints short-lived pull
 * credentials for the runtime); another owner's image and the local store are refused with image_forbidden.
 */
describe("pods deploy images pushed to the platform's registry", () => {
  let t: TestApp;
  let podman: Podman;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let image: string;
  let v1: string;
  const tagged: string[] = [];

  before(async () => {
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp({ env: { APPS_ALLOW_LOCAL_IMAGES: "0" } });
    podman = await Podman.create();
    alice = await signup(t.app);
    bob = await signup(t.app);
    const res = await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: alice.token });
    assert.equal(res.statusCode, 201, res.body);
    const creds = res.json();
    image = `${creds.registry}/${creds.namespace}/web:1`;
    const tag = await run("podman", ["tag", v1, image]);
    assert.equal(tag.code, 0, tag.stderr);
    tagged.push(image);
    assert.equal((await podman.login(creds.registry, creds.username, creds.password)).code, 0);
    const push = await podman.push(image);
    assert.equal(push.code, 0, push.stderr);
    // the pod must pull it from the registry: the host's store no longer knows the name
    assert.equal((await run("podman", ["untag", v1, image])).code, 0);
  });
  after(async () => {
    for (const u of [alice, bob].filter(Boolean))
      for (const p of (await call(t.app, { url: "/v1/pods", token: u.token })).json())
        await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: u.token });
    await new Promise((r) => setTimeout(r, 1000));
    await t?.close();
    // untag only: the shared test image keeps its own name (rmi --force could remove others' containers)
    for (const name of tagged) await run("podman", ["untag", v1, name]);
    await podman?.cleanup();
  });

  test("an image pushed to the owner's namespace deploys and serves with the platform's own credentials", async () => {
    const pod = await createPod(t, alice.token, { name: "reg-web", image, port: 8080 });
    const running = await waitPod(t, alice.token, pod.id, (p) => p.state === "running");
    assert.equal(running.image, image);
    assert.equal((await httpGet(`http://${running.address}/`)).body, "v1\n");
    // the runtime pulled it: the name is in the host's store again
    assert.equal((await run("podman", ["image", "exists", image])).code, 0);
    tagged.push(image);
  });

  test("a pods-only key deploys it too: no registry scope or credentials needed", async () => {
    const key = await scopedKey(t.app, alice.token, ["pods:write"]);
    const pod = await createPod(t, key, { name: "reg-key", image, port: 8080 });
    const running = await waitPod(t, key, pod.id, (p) => p.state === "running");
    assert.equal((await httpGet(`http://${running.address}/`)).body, "v1\n");
  });

  test("another owner's image and the host's local store are image_forbidden", async () => {
    const create = (token: string, img: string) =>
      call(t.app, { method: "POST", url: "/v1/pods", token, body: { name: "thief", image: img, port: 8080 } });
    const stolen = await create(bob.token, image);
    expectError(stolen, 403, "image_forbidden");
    assert.match(stolen.json().error.message, /namespace/);
    const local = await create(alice.token, v1);
    expectError(local, 403, "image_forbidden");
    assert.match(local.json().error.message, /local image store/);
    expectError(await create(alice.token, "localhost/anything:1"), 403, "image_forbidden");
    // nothing was recorded for the refused requests
    assert.equal((await call(t.app, { url: "/v1/pods", token: bob.token })).json().length, 0);
  });
});
