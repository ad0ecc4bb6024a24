/**
 * Base-image refresh (src/orgs/README.md, "Base-image refresh") with real buildah and the platform's registry: a
 * company pod built FROM a base image of the organization's namespace; the base pushed again under the same tag is
 * one proposal (once); a dismissed version is never proposed again, a newer one is; rebuild → 202 and the pod rolls
 * to the rebuilt image; policy auto rebuilds by itself; keep_days prunes; admins only. Three builds in all.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { rename } from "node:fs/promises";
import path from "node:path";
import { call, expectError, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { run } from "../registry/lib.js";
import { createBuildsTestApp, ended, upload, contextTarGz } from "../builds/lib.js";
import { fund } from "../databases/lib.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";
import { pushBase, type RegistryCreds } from "./refresh-lib.js";

let t: TestApp;
let org: TestOrg;
let admin: Person;
let creds: RegistryCreds;
let base: string;
const pulled: string[] = [];

const req = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, who: Person, body?: unknown) =>
  call(t.app, { method, url, token: who.token, body, headers: ORG });
const list = async () => {
  const res = await req("GET", "/v1/org/image-refreshes", admin);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};
const check = async () => {
  const res = await req("POST", "/v1/org/image-refreshes/check", admin);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};

async function waitBuild(id: string, until: (b: any) => boolean = ended, ms = 180_000) {
  const deadline = Date.now() + ms;
  let last: any;
  while (Date.now() < deadline) {
    last = (await req("GET", `/v1/builds/${id}`, admin)).json();
    if (until(last)) return last;
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.fail(`build ${id}: ${JSON.stringify(last)?.slice(0, 3000)}`);
}

async function waitItem(id: string, until: (i: any) => boolean, ms = 180_000) {
  const deadline = Date.now() + ms;
  let last: any;
  while (Date.now() < deadline) {
    last = (await list()).items.find((i: any) => i.id === id);
    if (last && until(last)) return last;
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.fail(`proposal ${id}: ${JSON.stringify(last)}`);
}

before(async () => {
  t = await createBuildsTestApp();
  org = await makeOrg(t, { admins: 1, members: 1 });
  admin = org.admins[0];
  await fund(t, admin.id);
  const res = await req("POST", "/v1/registry/credentials", admin);
  assert.equal(res.statusCode, 201, res.body);
  creds = res.json();
  base = `${creds.registry}/${creds.namespace}/base:stable`;
});
after(async () => {
  for (const p of (await req("GET", "/v1/pods", admin)).json()) await req("DELETE", `/v1/pods/${p.id}`, admin);
  await new Promise((r) => setTimeout(r, 1000));
  await t?.close();
  for (const image of pulled) await run("podman", ["rmi", "--force", image]);
});

describe("base-image refresh", () => {
  let pod: any;
  let first: any;
  let v1: string;
  let v2: string;

  test("a company app built FROM a base of the organization's namespace records the base's digest", async () => {
    v1 = await pushBase(creds, "base", "stable", "v1");
    const created = await req("POST", "/v1/pods", admin, {
      name: "refresh-web",
      image: await testImage("TEST_IMAGE_HTTPD_V1"),
      port: 8080,
    });
    assert.equal(created.statusCode, 201, created.body);
    pod = created.json();
    const build = await req("POST", "/v1/builds", admin, { app: pod.slug });
    assert.equal(build.statusCode, 201, build.body);
    const archive = contextTarGz({
      Dockerfile: `ARG BASE=${base}\nFROM $BASE\nCOPY index.html /www/index.html\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      "index.html": "refresh\n",
    });
    assert.equal((await upload(t, build.json().upload_url, archive)).statusCode, 200);
    assert.equal((await req("POST", `/v1/builds/${build.json().id}/start`, admin)).statusCode, 202);
    first = await waitBuild(build.json().id);
    assert.equal(first.status, "succeeded", `${first.status_reason}\n${first.logs}`);
    assert.doesNotMatch(first.logs, /was not recorded/);
    pulled.push(first.image);
    const { rows } = await t.db.query("SELECT base_images FROM org_app_builds WHERE build_id = $1", [first.id]);
    assert.deepEqual(rows[0].base_images, [{ image: base, digest: v1 }]);

    const view = await list();
    assert.equal(view.policy, "notify");
    assert.equal(view.keep_days, 30);
    assert.equal(view.builder.name, "buildah");
    assert.equal(view.builder.available, true);
    assert.match(view.builder.version, /^\d+\.\d+/);
    assert.deepEqual(view.items, []);
    assert.deepEqual(await check(), { created: 0, checked: 1 });
  });

  test("the base pushed again under the same tag is one proposal, once", async () => {
    v2 = await pushBase(creds, "base", "stable", "v2");
    assert.notEqual(v2, v1);
    assert.deepEqual(await check(), { created: 1, checked: 1 });
    const [item] = (await list()).items;
    assert.equal(item.status, "proposed");
    assert.equal(item.app_kind, "pod");
    assert.equal(item.app_id, pod.id);
    assert.equal(item.app_slug, pod.slug);
    assert.equal(item.build_id, first.id);
    assert.equal(item.base_image, base);
    assert.equal(item.old_digest, v1);
    assert.equal(item.new_digest, v2);
    assert.deepEqual(await check(), { created: 0, checked: 1 });
  });

  test("a dismissed version is not proposed again; a newer one is", async () => {
    const [item] = (await list()).items;
    const res = await req("POST", `/v1/org/image-refreshes/${item.id}/dismiss`, admin);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, "dismissed");
    assert.deepEqual(await check(), { created: 0, checked: 1 });
    // pruned long ago: the dismissal still holds
    await t.db.query("DELETE FROM org_image_refreshes WHERE id = $1", [item.id]);
    assert.deepEqual(await check(), { created: 0, checked: 1 });
    const v3 = await pushBase(creds, "base", "stable", "v3");
    assert.deepEqual(await check(), { created: 1, checked: 1 });
    const items = (await list()).items;
    assert.equal(items.length, 1);
    assert.equal(items[0].new_digest, v3);
  });

  test("members get 403 forbidden_role, outsiders 404; unknown ids 404", async () => {
    const [item] = (await list()).items;
    const member = org.members[0];
    const paths: ["GET" | "POST", string][] = [
      ["GET", "/v1/org/image-refreshes"],
      ["POST", "/v1/org/image-refreshes/check"],
      ["POST", `/v1/org/image-refreshes/${item.id}/dismiss`],
      ["POST", `/v1/org/image-refreshes/${item.id}/rebuild`],
    ];
    for (const [method, url] of paths) {
      expectError(await req(method, url, member), 403, "forbidden_role");
      expectError(await call(t.app, { method, url, token: org.outsider.token }), 404, "not_found");
    }
    expectError(await req("POST", "/v1/org/image-refreshes/00000000-0000-4000-8000-000000000000/rebuild", admin), 404);
    expectError(await req("POST", "/v1/org/image-refreshes/nope/dismiss", admin), 404);
  });

  test("rebuild: 409 while the source is gone; then 202 {build_id, tag}, the pod rolls to the rebuilt image", async () => {
    const [item] = (await list()).items;
    const kept = path.join(t.config.dataDir, "builds", "sources", first.id);
    await rename(kept, `${kept}.away`);
    expectError(await req("POST", `/v1/org/image-refreshes/${item.id}/rebuild`, admin), 409, "conflict");
    assert.equal((await list()).items[0].status, "proposed");
    await rename(`${kept}.away`, kept);

    const res = await req("POST", `/v1/org/image-refreshes/${item.id}/rebuild`, admin);
    assert.equal(res.statusCode, 202, res.body);
    const { build_id, tag } = res.json();
    assert.equal(tag, `build-${build_id}`);
    expectError(await req("POST", `/v1/org/image-refreshes/${item.id}/rebuild`, admin), 409, "conflict");
    const done = await waitBuild(build_id);
    assert.equal(done.status, "succeeded", `${done.status_reason}\n${done.logs}`);
    assert.ok(done.image.endsWith(`/${pod.slug}:${tag}`));
    assert.ok(done.deployed_at);
    pulled.push(done.image);
    const settled = await waitItem(item.id, (i) => i.status !== "rebuilding");
    assert.equal(settled.status, "done");
    assert.equal(settled.rebuild_build_id, build_id);
    assert.equal((await req("GET", `/v1/pods/${pod.id}`, admin)).json().image, done.image);
    // built on the proposed version; the app's newest build keeps its source, the older one is gone
    const { rows } = await t.db.query("SELECT base_images FROM org_app_builds WHERE app_id = $1", [pod.id]);
    assert.deepEqual(rows, [{ base_images: [{ image: base, digest: item.new_digest }] }]);
    assert.equal(existsSync(path.join(t.config.dataDir, "builds", "sources", build_id)), true);
    assert.equal(existsSync(kept), false);
    // the rebuild pulled the new base: nothing to propose
    assert.deepEqual(await check(), { created: 0, checked: 1 });
  });

  test("policy auto: the check starts the rebuild itself", async () => {
    const patched = await req("PATCH", "/v1/org", admin, { image_refresh_policy: "auto" });
    assert.equal(patched.statusCode, 200, patched.body);
    await pushBase(creds, "base", "stable", "v4");
    assert.deepEqual(await check(), { created: 1, checked: 1 });
    const item = (await list()).items.find((i: any) => i.status !== "done");
    assert.equal(item.status, "rebuilding");
    assert.ok(item.rebuild_build_id);
    const done = await waitBuild(item.rebuild_build_id);
    assert.equal(done.status, "succeeded", `${done.status_reason}\n${done.logs}`);
    pulled.push(done.image);
    assert.equal((await waitItem(item.id, (i) => i.status !== "rebuilding")).status, "done");
  });

  test("proposals older than keep_days are pruned", async () => {
    const patched = await req("PATCH", "/v1/org", admin, { image_refresh_keep_days: 5 });
    assert.equal(patched.statusCode, 200, patched.body);
    const items = (await list()).items;
    assert.equal(items.length, 2);
    await t.db.query("UPDATE org_image_refreshes SET created_at = now() - interval '6 days' WHERE id = $1", [
      items[0].id,
    ]);
    await t.db.query("UPDATE org_image_refreshes SET created_at = now() - interval '4 days' WHERE id = $1", [
      items[1].id,
    ]);
    const left = (await list()).items;
    assert.deepEqual(
      left.map((i: any) => i.id),
      [items[1].id],
    );
  });
});
