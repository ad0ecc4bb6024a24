import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp } from "./lib.js";
import { createRunning } from "../databases/lib.js";
import type { AppsState } from "../../src/apps/module.js";
import { LABEL_POD } from "../../src/apps/container-spec.js";

/**
 * Pod templates through HTTP: saved specs (validated like POST /v1/pods, env sealed at rest), changed and
 * deleted, deployed by `POST /v1/pods {template}` on a real container with the request's fields overriding
 * the template's; scopes and instance-limited keys.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("pod templates API", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let image: string;
  let image2: string;
  let web: any;

  const get = (url: string, token = user.token) => call(t.app, { url, token });
  const post = (url: string, body: unknown, token = user.token) => call(t.app, { method: "POST", url, token, body });
  const patch = (url: string, body: unknown, token = user.token) => call(t.app, { method: "PATCH", url, token, body });
  const del = (url: string, token = user.token) => call(t.app, { method: "DELETE", url, token });

  async function running(id: string): Promise<any> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const p = (await get(`/v1/pods/${id}`)).json();
      if (p.state === "failed") throw new Error(`pod failed: ${p.state_reason}`);
      if (p.state === "running" && p.serving_generation === p.generation) return p;
      if (Date.now() > deadline) throw new Error(`pod ${id} not running: ${JSON.stringify(p)}`);
      await sleep(100);
    }
  }

  before(async () => {
    image = await testImage("TEST_IMAGE_HTTPD_V1");
    image2 = await testImage("TEST_IMAGE_HTTPD_V2");
    t = await createAppsTestApp({ env: { APPS_DRAIN_MS: "0" } });
    user = await signup(t.app);
  });

  after(async () => {
    const apps = t.platform.state<AppsState>("apps");
    await t.db.query("UPDATE pods SET desired_state = 'removed'");
    await apps.worker.stop();
    const pods = await t.db.query<{ id: string }>("SELECT id FROM pods");
    for (const p of pods.rows)
      for (const c of await apps.runtime.list({ [LABEL_POD]: p.id })) await apps.runtime.remove(c.name);
    const nets = await t.db.query<{ name: string }>("SELECT DISTINCT name FROM owner_networks");
    for (const n of nets.rows) await apps.runtime.removeNetwork(n.name).catch(() => {});
    await t.close();
  });

  test("creation validates like POST /v1/pods and answers 201 with the spec and env", async () => {
    expectError(await post("/v1/pod-templates", { name: "No_Good", image }), 400, "bad_slug");
    expectError(await post("/v1/pod-templates", { image }), 400, "bad_slug"); // the name is required
    expectError(await post("/v1/pod-templates", { name: "web", size: "huge" }), 400, "bad_size");
    expectError(await post("/v1/pod-templates", { name: "web", image: "not an image!" }), 400, "bad_image");
    expectError(await post("/v1/pod-templates", { name: "web", env: { "1BAD": "x" } }), 400, "invalid_request");
    expectError(await post("/v1/pod-templates", { name: "web", replicas: 3 }), 400, "invalid_request");

    const res = await post("/v1/pod-templates", {
      name: "web",
      image,
      port: 8080,
      env: { GREETING: "saved", SECRET_TOKEN: "s3cr3t-value" },
      size: "nano",
    });
    assert.equal(res.statusCode, 201, res.body);
    web = res.json();
    assert.equal(web.name, "web");
    assert.equal(web.image, image);
    assert.equal(web.port, 8080);
    assert.equal(web.command, null);
    assert.equal(web.size, "nano");
    assert.deepEqual(web.env, { GREETING: "saved", SECRET_TOKEN: "s3cr3t-value" });
    assert.deepEqual(web.volumes, []);
    assert.deepEqual(web.databases, []);
    expectError(await post("/v1/pod-templates", { name: "web" }), 409, "slug_taken");

    const { rows } = await t.db.query("SELECT spec::text AS spec FROM pod_templates WHERE id = $1", [web.id]);
    assert.ok(!rows[0].spec.includes("s3cr3t-value"), "env is sealed at rest");

    // a template may leave everything but its name to the deploy
    const bare = await post("/v1/pod-templates", { name: "bare" });
    assert.equal(bare.statusCode, 201, bare.body);
    assert.equal(bare.json().image, null);
    assert.deepEqual(bare.json().env, {});
  });

  test("references are checked when written: an unknown or another account's database or volume is 404 naming it", async () => {
    const other = await signup(t.app);
    const theirs = await createRunning(t, other.token, { name: "their-db" });
    const missing = "00000000-0000-4000-8000-000000000000";
    for (const [body, named] of [
      [{ name: "db-missing", databases: [missing] }, missing],
      [{ name: "db-theirs", databases: [theirs.slug] }, theirs.slug],
      [{ name: "db-theirs-id", databases: [theirs.id] }, theirs.id],
      [{ name: "vol-missing", volumes: [{ volume: "no-such-volume", path: "/data" }] }, "no-such-volume"],
    ] as const) {
      const res = await post("/v1/pod-templates", body);
      expectError(res, 404, "not_found");
      assert.ok(res.json().error.message.includes(`"${named}"`), res.body);
      const later = await post("/v1/pod-templates", { name: `${body.name}-later` });
      assert.equal(later.statusCode, 201, later.body);
      const { databases, volumes } = body as unknown as { databases?: string[]; volumes?: unknown };
      expectError(await patch(`/v1/pod-templates/${later.json().id}`, { databases, volumes }), 404, "not_found");
      await del(`/v1/pod-templates/${later.json().id}`);
    }
    const stored = (await get("/v1/pod-templates")).json().map((x: { name: string }) => x.name);
    assert.ok(!stored.some((n: string) => /^(db|vol)-/.test(n)), stored.join()); // nothing refused was stored
    const own = await post("/v1/pod-templates", { name: "db-own", databases: [theirs.slug] }, other.token);
    assert.equal(own.statusCode, 201, own.body);
    assert.deepEqual(own.json().databases, [theirs.slug]);
  });

  test("list and read by id or name; another account sees nothing", async () => {
    const list = (await get("/v1/pod-templates")).json();
    assert.deepEqual(
      list.map((x: any) => x.name),
      ["web", "bare"],
    );
    assert.deepEqual((await get(`/v1/pod-templates/${web.id}`)).json(), web);
    assert.deepEqual((await get("/v1/pod-templates/web")).json(), web);
    expectError(await get("/v1/pod-templates/nope"), 404, "not_found");
    const other = await signup(t.app);
    assert.deepEqual((await get("/v1/pod-templates", other.token)).json(), []);
    expectError(await get(`/v1/pod-templates/${web.id}`, other.token), 404, "not_found");
    expectError(await patch(`/v1/pod-templates/${web.id}`, { port: 81 }, other.token), 404, "not_found");
    expectError(await del(`/v1/pod-templates/${web.id}`, other.token), 404, "not_found");
    expectError(await post("/v1/pods", { template: "web", name: "stolen" }, other.token), 404, "not_found");
  });

  test("PATCH replaces the given fields only; null clears", async () => {
    const res = await patch("/v1/pod-templates/bare", { image: image2, command: ["sleep", "1000"], port: 8080 });
    assert.equal(res.statusCode, 200, res.body);
    const bare = res.json();
    assert.equal(bare.image, image2);
    assert.deepEqual(bare.command, ["sleep", "1000"]);
    assert.equal(bare.port, 8080);
    assert.ok(bare.updated_at >= bare.created_at);
    const cleared = (await patch("/v1/pod-templates/bare", { command: null, env: { ONLY: "this" } })).json();
    assert.equal(cleared.command, null);
    assert.equal(cleared.image, image2, "image kept");
    assert.deepEqual(cleared.env, { ONLY: "this" });
    const renamed = await patch(`/v1/pod-templates/${bare.id}`, { name: "plain" });
    assert.equal(renamed.json().name, "plain");
    expectError(await patch("/v1/pod-templates/plain", { name: "web" }), 409, "slug_taken");
    expectError(await patch("/v1/pod-templates/plain", { size: "huge" }), 400, "bad_size");
    expectError(await patch("/v1/pod-templates/plain", { image: "UPPER CASE" }), 400, "bad_image");
    expectError(await patch("/v1/pod-templates/missing", { port: 80 }), 404, "not_found");
    assert.equal((await get("/v1/pod-templates/plain")).json().image, image2, "a refused PATCH changed nothing");
  });

  test("POST /v1/pods {template} deploys the saved spec with merged env; given fields override", async () => {
    expectError(await post("/v1/pods", { template: "nope", name: "from-nothing" }), 404, "not_found");

    const res = await post("/v1/pods", { template: "web", name: "from-tpl", env: { GREETING: "given", EXTRA: "1" } });
    assert.equal(res.statusCode, 201, res.body);
    const pod = res.json();
    assert.equal(pod.image, image);
    assert.equal(pod.port, 8080);
    assert.equal(pod.size, "nano");
    assert.equal(pod.template_id, web.id);
    assert.deepEqual(pod.env, { GREETING: "given", SECRET_TOKEN: "s3cr3t-value", EXTRA: "1" });
    await running(pod.id);
    const ran = await post(`/v1/pods/${pod.id}/exec`, {
      command: ["sh", "-c", 'echo "$GREETING $SECRET_TOKEN $EXTRA"; wget -qO- http://127.0.0.1:8080/'],
    });
    assert.equal(ran.statusCode, 200, ran.body);
    assert.equal(ran.json().stdout, "given s3cr3t-value 1\nv1\n", "the container runs the template's image and env");

    // the template's name is the default pod name; the image given replaces the template's
    const over = await post("/v1/pods", { template: web.id, image: image2 });
    assert.equal(over.statusCode, 201, over.body);
    assert.equal(over.json().name, "web");
    assert.equal(over.json().image, image2);
    assert.deepEqual(over.json().env, web.env);
    assert.equal((await del(`/v1/pods/${over.json().id}`)).statusCode, 202);

    // deleting the template leaves the pods deployed from it
    const gone = await del("/v1/pod-templates/web");
    assert.equal(gone.statusCode, 204, gone.body);
    expectError(await get(`/v1/pod-templates/${web.id}`), 404, "not_found");
    expectError(await del(`/v1/pod-templates/${web.id}`), 404, "not_found");
    expectError(await post("/v1/pods", { template: "web", name: "after-delete" }), 404, "not_found");
    assert.equal((await get(`/v1/pods/${pod.id}`)).json().state, "running");
    // the name is free again
    assert.equal((await post("/v1/pod-templates", { name: "web", image })).statusCode, 201);
    assert.equal((await del(`/v1/pods/${pod.id}`)).statusCode, 202);
  });

  test("scopes: read keys cannot write; instance keys see and change only their template", async () => {
    const a = (await post("/v1/pod-templates", { name: "tpl-a", image })).json();
    const b = (await post("/v1/pod-templates", { name: "tpl-b", image })).json();
    const reader = await scopedKey(t.app, user.token, ["pod-templates:read"]);
    assert.ok((await get("/v1/pod-templates", reader)).json().length >= 2);
    expectError(await post("/v1/pod-templates", { name: "tpl-c" }, reader), 403, "scope_insufficient");
    expectError(await patch(`/v1/pod-templates/${a.id}`, { port: 1 }, reader), 403, "scope_insufficient");
    expectError(await del(`/v1/pod-templates/${a.id}`, reader), 403, "scope_insufficient");
    const podsKey = await scopedKey(t.app, user.token, ["pods:*"]);
    expectError(await get("/v1/pod-templates", podsKey), 403, "scope_insufficient");

    const one = await scopedKey(t.app, user.token, [`pod-templates:write:${a.id}`]);
    assert.deepEqual(
      (await get("/v1/pod-templates", one)).json().map((x: any) => x.id),
      [a.id],
    );
    assert.equal((await get("/v1/pod-templates/tpl-a", one)).statusCode, 200, "the id grant covers the name");
    assert.equal((await patch("/v1/pod-templates/tpl-a", { port: 8080 }, one)).statusCode, 200);
    expectError(await get(`/v1/pod-templates/${b.id}`, one), 403, "scope_insufficient");
    expectError(await patch("/v1/pod-templates/tpl-b", { port: 1 }, one), 403, "scope_insufficient");
    expectError(await post("/v1/pod-templates", { name: "tpl-c" }, one), 403, "scope_insufficient");

    const byName = await scopedKey(t.app, user.token, ["pod-templates:read:tpl-b"]);
    assert.equal((await get(`/v1/pod-templates/${b.id}`, byName)).statusCode, 200, "a name grant covers the id");
    assert.deepEqual(
      (await get("/v1/pod-templates", byName)).json().map((x: any) => x.id),
      [b.id],
    );
    assert.equal((await del("/v1/pod-templates/tpl-a", one)).statusCode, 204);
  });
});
