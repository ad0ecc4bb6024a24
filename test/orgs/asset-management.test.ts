/**
 * Who changes company assets (issue 34; src/orgs/README.md, "Who changes company assets"), through HTTP in the
 * company context (X-Owner: org): a member reads an admin's assets but changing or deleting them is 403
 * forbidden_role naming the responsible member (bucket delete and read_write S3 key, static site delete, PATCH and
 * new deployment, volume delete); the member manages their own; an admin manages the member's; with the
 * organization's `members_manage_all_assets` on, the member manages the admin's. Then a matrix generated from the
 * route table: every mutating route that names an instance of a kind created here answers the member 403
 * forbidden_role on the admin's instance (bucket, site, volume, database, pod, template, domain), every other
 * mutating route with a path parameter answers a 4xx, and the admin's assets are all still there.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import type { RouteEntry } from "../../src/http/route-table.js";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { fund } from "../databases/lib.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;
let admin: Person;
let member: Person;
const tag = randomBytes(3).toString("hex");

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgmanage.test", APPS_ALLOW_LOCAL_IMAGES: "1" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
  [admin] = org.admins;
  [member] = org.members;
  for (const p of [admin, member]) await fund(t, p.id);
});
after(async () => t?.close());

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
const req = (method: Method, url: string, who: Person, body?: unknown) =>
  call(t.app, { method, url, token: who.token, body, headers: ORG });

async function created(method: Method, url: string, who: Person, body: unknown) {
  const res = await req(method, url, who, body);
  assert.ok(res.statusCode === 201 || res.statusCode === 202, `${method} ${url}: ${res.body}`);
  return res.json();
}

/** The member's refusal: 403 forbidden_role naming the responsible member and the way out. */
function refused(res: Awaited<ReturnType<typeof req>>, responsible: Person) {
  expectError(res, 403, "forbidden_role");
  const message: string = res.json().error.message;
  assert.ok(message.includes(responsible.email), message);
  assert.match(message, /admin/);
}

const bucket = (who: Person, name: string) => created("POST", "/v1/buckets", who, { name });
const site = (who: Person, name: string) => created("POST", "/v1/static", who, { name });
const volume = (who: Person, name: string) => created("POST", "/v1/volumes", who, { name, size_gb: 1 });
const setManageAll = async (who: Person, on: boolean) => {
  const res = await call(t.app, {
    method: "PATCH",
    url: "/v1/org",
    token: who.token,
    body: { members_manage_all_assets: on },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().members_manage_all_assets, on);
};

describe("members change only the company assets they are responsible for", () => {
  test("an admin's bucket, site, volume: the member reads them, changes are 403 forbidden_role; own ones and the admin on the member's go", async () => {
    const b = await bucket(admin, `adm-b-${tag}`);
    const s = await site(admin, `adm-s-${tag}`);
    const v = await volume(admin, `adm-v-${tag}`);

    for (const url of [`/v1/buckets/${b.id}`, `/v1/static/${s.slug}`, `/v1/volumes/${v.id}`])
      assert.equal((await req("GET", url, member)).statusCode, 200, `${url} is readable`);

    refused(await req("DELETE", `/v1/buckets/${b.id}`, member), admin);
    const rw = { name: "rw", bucket_ids: [b.id], permission: "read_write" };
    refused(await req("POST", "/v1/buckets/keys", member, rw), admin);
    // every bucket at once reaches the admin's: only admins
    expectError(await req("POST", "/v1/buckets/keys", member, { name: "all", permission: "read_write" }), 403);
    // reading is anyone's: a read key for the admin's bucket is issued
    const ro = await req("POST", "/v1/buckets/keys", member, { ...rw, permission: "read" });
    assert.equal(ro.statusCode, 201, ro.body);
    // the admin's own key is theirs to revoke
    const adminKey = await created("POST", "/v1/buckets/keys", admin, rw);
    refused(await req("DELETE", `/v1/buckets/keys/${adminKey.id}`, member), admin);

    refused(await req("DELETE", `/v1/static/${s.slug}`, member), admin);
    refused(await req("PATCH", `/v1/static/${s.slug}`, member, { spa: true }), admin);
    refused(await req("POST", `/v1/static/${s.slug}/deployments`, member, {}), admin);
    refused(await req("DELETE", `/v1/volumes/${v.id}`, member), admin);

    // nothing changed
    assert.equal((await req("GET", `/v1/buckets/${b.id}`, admin)).statusCode, 200);
    assert.equal((await req("GET", `/v1/static/${s.slug}`, admin)).json().spa, false);
    assert.equal((await req("GET", `/v1/volumes/${v.id}`, admin)).statusCode, 200);
    const keys = (await req("GET", "/v1/buckets/keys", admin)).json() as { id: string }[];
    assert.ok(
      keys.some((k) => k.id === adminKey.id),
      "the admin's key is still live",
    );
    // a custom domain on the admin's site changes the site
    refused(await req("POST", `/v1/apps/${s.slug}/domains`, member, { domain: `www.adm-${tag}.example.com` }), admin);

    // the member manages their own, the admin manages the member's
    const mb = await bucket(member, `mem-b-${tag}`);
    const ms = await site(member, `mem-s-${tag}`);
    const key = await created("POST", "/v1/buckets/keys", member, {
      name: "mine",
      bucket_ids: [mb.id],
      permission: "read_write",
    });
    assert.equal((await req("PATCH", `/v1/static/${ms.slug}`, member, { spa: true })).statusCode, 200);
    assert.equal((await req("POST", `/v1/static/${ms.slug}/deployments`, member, {})).statusCode, 201);
    assert.equal((await req("DELETE", `/v1/buckets/keys/${key.id}`, member)).statusCode, 204);
    assert.equal((await req("DELETE", `/v1/static/${ms.slug}`, member)).statusCode, 204);
    const mv = await volume(member, `mem-v-${tag}`);
    assert.equal((await req("DELETE", `/v1/volumes/${mv.id}`, member)).statusCode, 202);

    // the admin on the member's
    const s2 = await site(member, `mem-s2-${tag}`);
    assert.equal((await req("PATCH", `/v1/static/${s2.slug}`, admin, { spa: true })).statusCode, 200);
    assert.equal((await req("DELETE", `/v1/static/${s2.slug}`, admin)).statusCode, 204);
    assert.equal((await req("DELETE", `/v1/buckets/${mb.id}`, admin)).statusCode, 204);
    const v2 = await volume(member, `mem-v2-${tag}`);
    assert.equal((await req("DELETE", `/v1/volumes/${v2.id}`, admin)).statusCode, 202);
  });

  test("members_manage_all_assets (admins set it, GET /v1/org shows it): then the member manages the admin's", async () => {
    const shown = await call(t.app, { url: "/v1/org", token: member.token });
    assert.equal(shown.json().members_manage_all_assets, false, "off by default");
    expectError(
      await call(t.app, {
        method: "PATCH",
        url: "/v1/org",
        token: member.token,
        body: { members_manage_all_assets: true },
      }),
      403,
      "forbidden_role",
    );
    const b = await bucket(admin, `adm-b2-${tag}`);
    const s = await site(admin, `adm-s2-${tag}`);
    const v = await volume(admin, `adm-v2-${tag}`);
    await setManageAll(admin, true);
    try {
      const rw = { name: "rw2", bucket_ids: [b.id], permission: "read_write" };
      assert.equal((await req("POST", "/v1/buckets/keys", member, rw)).statusCode, 201);
      assert.equal((await req("PATCH", `/v1/static/${s.slug}`, member, { spa: true })).statusCode, 200);
      assert.equal((await req("POST", `/v1/static/${s.slug}/deployments`, member, {})).statusCode, 201);
      assert.equal((await req("DELETE", `/v1/static/${s.slug}`, member)).statusCode, 204);
      assert.equal((await req("DELETE", `/v1/buckets/${b.id}?force=1`, member)).statusCode, 204);
      assert.equal((await req("DELETE", `/v1/volumes/${v.id}`, member)).statusCode, 202);
    } finally {
      await setManageAll(admin, false);
    }
  });
});

describe("company-asset matrix, generated from the route table", () => {
  test("every mutating route naming an instance of an admin's asset answers the member 403 forbidden_role", async () => {
    // one asset of each kind the admin is responsible for (a database of the smallest size; a pod when it is admitted)
    const b = await bucket(admin, `mx-b-${tag}`);
    const s = await site(admin, `mx-s-${tag}`);
    const deployment = await created("POST", `/v1/static/${s.slug}/deployments`, admin, {});
    const v = await volume(admin, `mx-v-${tag}`);
    const d = await created("POST", "/v1/databases", admin, { name: `mx-d-${tag}`, size: "dev" });
    const pod = await req("POST", "/v1/pods", admin, { name: `mx-p-${tag}`, image: "docker.io/library/nginx:1" });
    assert.equal(pod.statusCode, 201, pod.body);
    const template = await created("POST", "/v1/pod-templates", admin, { name: `mx-t-${tag}` });
    const domain = await created("POST", `/v1/apps/${s.slug}/domains`, admin, { domain: `mx-${tag}.example.com` });
    /** the instance parameter's value per resource, and the admin's refs for other parameters of the same route */
    const instances: Record<string, { ref: string; other: Record<string, string> }> = {
      buckets: { ref: b.id, other: {} },
      static: { ref: s.slug, other: { id: deployment.id } },
      volumes: { ref: v.id, other: {} },
      databases: { ref: d.id, other: {} },
      pods: { ref: pod.json().id, other: {} },
      "pod-templates": { ref: template.id, other: {} },
      domains: { ref: domain.id, other: { slug: s.slug } },
    };
    const routes = (t.app as unknown as { routeTable: RouteEntry[] }).routeTable.filter(
      (r) =>
        r.method !== "GET" &&
        r.url.includes(":") &&
        !r.url.startsWith("/v1/org") &&
        "scope" in r.auth &&
        r.auth.scope.endsWith(":write") &&
        typeof r.auth.instance === "object",
    );
    const checked = new Map<string, number>();
    for (const r of routes) {
      const auth = r.auth as { scope: string; instance: { param: string } };
      const resource = auth.scope.split(":")[0];
      const mine = instances[resource];
      if (!mine) continue;
      // named parameters first (a static deployment id, even where it is the instance parameter), then the instance
      const value = (name: string) => mine.other[name] ?? (name === auth.instance.param ? mine.ref : randomUUID());
      const url = r.url.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(value(name)));
      const res = await call(t.app, { method: r.method as never, url, token: member.token, headers: ORG, body: {} });
      assert.equal(res.statusCode, 403, `${r.method} ${r.url} as a member: ${res.body}`);
      assert.equal(res.json().error.code, "forbidden_role", `${r.method} ${r.url}: ${res.body}`);
      assert.ok(res.json().error.message.includes(admin.email), `${r.method} ${r.url}: ${res.body}`);
      checked.set(resource, (checked.get(resource) ?? 0) + 1);
    }
    // every kind created here was reached, with the routes the issue names among them
    for (const kind of Object.keys(instances)) assert.ok(checked.get(kind), `no route checked for ${kind}`);
    assert.ok([...checked.values()].reduce((a, n) => a + n, 0) >= 30, JSON.stringify([...checked]));

    // a build deploying to the admin's pod changes it (where this process has a builder)
    const build = await req("POST", "/v1/builds", member, { app: pod.json().id });
    if (build.json().error?.code !== "builder_unavailable") refused(build, admin);

    // every other mutating route with a path parameter (outside /v1/org): nothing of anyone's, never a 2xx or a 500
    const others = (t.app as unknown as { routeTable: RouteEntry[] }).routeTable.filter(
      (r) =>
        r.method !== "GET" &&
        r.url.includes(":") &&
        !r.url.startsWith("/v1/org") &&
        !routes.includes(r) &&
        !("operator" in r.auth || "fleet" in r.auth || "public" in r.auth),
    );
    for (const r of others) {
      const url = r.url.replace(/:(\w+)/g, () => randomUUID());
      const res = await call(t.app, { method: r.method as never, url, token: member.token, headers: ORG, body: {} });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${r.method} ${r.url} as a member: ${res.body}`);
    }

    for (const url of [`/v1/buckets/${b.id}`, `/v1/static/${s.slug}`, `/v1/volumes/${v.id}`, `/v1/databases/${d.id}`])
      assert.equal((await req("GET", url, admin)).statusCode, 200, `${url} is still there`);
  });
});
