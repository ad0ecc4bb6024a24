/**
 * Partner managed registries (spec Partner features 14) against the real registry: POST
 * /v1/partner/users/{id}/registry gives <root>/<partner>/<child>/<app> and short-lived credentials that push there
 * only; the child's token deploys that image with no registry credential; another child's image is image_forbidden.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { denied, Podman, run } from "../registry/lib.js";
import { createAppsTestApp, createPod, httpGet, waitPod } from "../apps/lib.js";

describe("partner managed registry", () => {
  let t: TestApp;
  let podman: Podman;
  let key: string;
  let partnerId: string;
  let v1: string;
  const tagged: string[] = [];
  const children: { id: string; token: string }[] = [];

  const asPartner = (url: string, body: unknown) => call(t.app, { method: "POST", url, token: key, body });

  before(async () => {
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp({ env: { APPS_ALLOW_LOCAL_IMAGES: "0" } });
    podman = await Podman.create();
    const partner = await signup(t.app);
    partnerId = partner.id;
    // postpaid: children deploy without a balance of their own
    const made = await call(t.app, {
      method: "PUT",
      url: `/v1/operator/partners/${partner.id}`,
      token: OPERATOR_TOKEN,
      body: { billing_mode: "partner_postpaid", monthly_limit_krw: 1_000_000 },
    });
    assert.equal(made.statusCode, 200, made.body);
    key = await scopedKey(t.app, partner.token, ["partner:*"]);
    for (let i = 0; i < 2; i++) {
      const res = await asPartner("/v1/partner/users", {
        external_ref: `reg-${randomUUID()}`,
        token: { scopes: ["pods:*"] },
      });
      assert.equal(res.statusCode, 201, res.body);
      children.push({ id: res.json().id, token: res.json().token.key });
    }
  });
  after(async () => {
    for (const c of children)
      for (const p of (await call(t.app, { url: "/v1/pods", token: c.token })).json())
        await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: c.token });
    await new Promise((r) => setTimeout(r, 1000));
    await t?.close();
    for (const name of tagged) await run("podman", ["untag", v1, name]);
    await podman?.cleanup();
  });

  test("push with the returned credentials into the app's repository only; the child deploys it; others' are 403", async () => {
    const [a, b] = children;
    const res = await asPartner(`/v1/partner/users/${a.id}/registry`, { app: "web" });
    assert.equal(res.statusCode, 201, res.body);
    const creds = res.json();
    const part = (id: string) => id.replace(/-/g, "").slice(0, 12);
    assert.equal(creds.repository, `partners/${part(partnerId)}/${part(a.id)}/web`);
    assert.equal(creds.image, `${creds.registry}/${creds.repository}`);
    const ttl = new Date(creds.expires_at).getTime() - Date.now();
    assert.ok(ttl > 0 && ttl <= 3600_000, `short-lived: ${ttl} ms`);
    expectError(await asPartner(`/v1/partner/users/${randomUUID()}/registry`, { app: "web" }), 404, "not_found");
    expectError(await asPartner(`/v1/partner/users/${a.id}/registry`, { app: "Web App" }), 400, "invalid_request");

    assert.equal((await podman.login(creds.registry, creds.username, creds.password)).code, 0);
    const image = `${creds.image}:1`;
    assert.equal((await run("podman", ["tag", v1, image])).code, 0);
    tagged.push(image);
    const push = await podman.push(image);
    assert.equal(push.code, 0, push.stderr);
    // the same credentials push nowhere else: another app of the child, another child's namespace
    const bNamespace = `${creds.registry}/partners/${part(partnerId)}/${part(b.id)}/web:1`;
    for (const elsewhere of [`${creds.registry}/${creds.namespace}/other:1`, bNamespace]) {
      assert.equal((await run("podman", ["tag", v1, elsewhere])).code, 0);
      tagged.push(elsewhere);
      assert.ok(denied(await podman.push(elsewhere)), elsewhere);
    }
    // the pod must pull it from the registry with the platform's own credentials
    assert.equal((await run("podman", ["untag", v1, image])).code, 0);

    const pod = await createPod(t, a.token, { name: "partner-web", image, port: 8080 });
    const running = await waitPod(t, a.token, pod.id, (p) => p.state === "running");
    assert.equal((await httpGet(`http://${running.address}/`)).body, "v1\n");
    const stolen = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: b.token,
      body: { name: "thief", image, port: 8080 },
    });
    expectError(stolen, 403, "image_forbidden");
  });
});
