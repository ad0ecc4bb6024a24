/**
 * Company assets through HTTP (src/orgs/README.md, "Company assets"): what members create for the organization
 * is listed in /v1/org/assets (the caller's) and /v1/org/resources (all); a member designates a personal site or
 * bucket (with the S3 keys limited to it), an admin gives it back; leaving hands company assets to the owner and
 * keeps personal ones; deleting the organization returns them to their creators. The edge's route source follows
 * each move (NOTIFY static_routes), and the site keeps serving. Roles: 403 forbidden_role below admin, 404 outside.
 */
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { call, expectError, scopedKey, signup } from "../helpers/app.js";
import { createSite, deploy, get as edgeGet, staticApp, tarGz, type StaticApp } from "../static/lib.js";
import { issueToken } from "../../src/auth/api-keys.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";

let s: StaticApp;
let org: TestOrg;
const suffix = randomBytes(3).toString("hex");

before(async () => {
  s = await staticApp();
  org = await makeOrg(s.t, { admins: 1, members: 2 });
});
after(async () => s?.close());

const req = (method: "GET" | "POST" | "DELETE", url: string, who: Person, body?: unknown, headers = {}) =>
  call(s.t.app, { method, url, token: who.token, body, headers });
const items = async (url: string, who: Person) => {
  const res = await req("GET", url, who);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().items as { kind: string; id: string; slug: string; creator: { id: string; email: string } }[];
};
const ids = (list: { id: string }[]) => list.map((i) => i.id).sort();

/** The route the edge resolves for a site's slug now (the static area's route source). */
const edgeOwner = async (slug: string) => {
  const source = s.t.platform.kernel.all("edgeRoutes").find((r) => r.channel === "static_routes")!;
  return (await source.resolve(s.t.db, slug))?.owner ?? null;
};

describe("company assets", () => {
  test("created with owner:org: listed as the creator's assets and in the enterprise view, with the creator", async () => {
    const [member] = org.members;
    const site = await createSite(s.t, member.token, { name: `co-site-${suffix}`, owner: "org" });
    const bucket = await req("POST", "/v1/buckets", member, { name: `co-bucket-${suffix}`, owner: "org" });
    assert.equal(bucket.statusCode, 201, bucket.body);

    const mine = await items("/v1/org/assets", member);
    assert.deepEqual(ids(mine), [site.id, bucket.json().id].sort());
    assert.ok(mine.every((a) => a.creator.id === member.id && a.creator.email === member.email));
    assert.deepEqual(await items("/v1/org/assets", org.admins[0]), [], "an admin's own list has none of them");

    const all = await items("/v1/org/resources", org.members[1]);
    const row = all.find((a) => a.id === site.id)!;
    assert.equal(row.kind, "site");
    assert.equal(row.slug, site.slug);
    assert.deepEqual(row.creator, { id: member.id, email: member.email });
    assert.equal((row as unknown as { state: string }).state, "empty");
    assert.ok(all.some((a) => a.kind === "bucket" && a.id === bucket.json().id));
    // kinds filter, with the aliases the spec's words use
    assert.deepEqual(ids(await items("/v1/org/resources?kind=static", member)), [site.id]);
    assert.deepEqual(ids(await items(`/v1/org/resources?kind=bucket&creator=${org.owner.id}`, member)), []);
    expectError(await req("GET", "/v1/org/resources?kind=printer", member), 400, "invalid_request");
  });

  test("designate a personal site: a company asset (201), the edge follows, the site keeps serving; again 200", async () => {
    const member = org.members[1];
    const site = await createSite(s.t, member.token, { name: `mine-${suffix}` });
    await deploy(s.t, member.token, site.slug, await tarGz({ "index.html": "personal then company\n" }));
    assert.deepEqual(await edgeOwner(site.slug), { kind: "account", id: member.id });

    const listener = new pg.Client({ connectionString: s.t.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.payload ?? ""));
    await listener.query("LISTEN static_routes");
    try {
      // someone else's, unknown: 404; an organization key cannot hand over a person's things
      expectError(
        await req("POST", "/v1/org/assets", org.members[0], { kind: "site", id: site.slug }),
        404,
        "not_found",
      );
      expectError(await req("POST", "/v1/org/assets", member, { kind: "site", id: "no-such-site" }), 404, "not_found");
      expectError(await req("POST", "/v1/org/assets", member, { kind: "printer", id: site.id }), 400);
      const { secret } = await issueToken(s.t.db, {
        accountId: member.id,
        owner: { kind: "org", id: org.id },
        kind: "scoped",
        name: "ci",
        scopes: ["org:write"],
        expiresAt: null,
      });
      const orgKey = { ...member, token: secret };
      expectError(await req("POST", "/v1/org/assets", orgKey, { kind: "site", id: site.id }), 403, "forbidden_role");

      const res = await req("POST", "/v1/org/assets", member, { kind: "static", id: site.slug });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().id, site.id);
      assert.equal(res.json().kind, "site");
      assert.equal(res.json().state, "live");
      assert.deepEqual(res.json().moved_with, []);
      const again = await req("POST", "/v1/org/assets", member, { kind: "site", id: site.id });
      assert.equal(again.statusCode, 200, again.body);

      assert.deepEqual(await edgeOwner(site.slug), { kind: "org", id: org.id });
      for (let i = 0; i < 50 && !heard.includes(site.slug); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(heard.includes(site.slug), "the move is announced on static_routes");
    } finally {
      await listener.end();
    }
    // a company site has the organization's default visibility (company): members see it, anonymous visitors sign in
    assert.equal((await edgeGet(s.port, site.slug)).status, 401);
    const served = await edgeGet(s.port, site.slug, "/", { headers: { cookie: `platform_session=${member.token}` } });
    assert.equal(served.status, 200);
    assert.equal(served.text, "personal then company\n");

    // the organization's context sees it and its deployments; the personal one no longer does
    expectError(await req("GET", `/v1/static/${site.slug}`, member), 404, "not_found");
    assert.equal((await req("GET", `/v1/static/${site.slug}`, org.admins[0], undefined, ORG)).statusCode, 200);
    const deployments = await req("GET", `/v1/static/${site.slug}/deployments`, org.owner, undefined, ORG);
    assert.equal(deployments.statusCode, 200, deployments.body);
    assert.equal(deployments.json().length, 1);
    assert.ok((await items("/v1/org/assets", member)).some((a) => a.id === site.id));
  });

  test("a bucket moves with the S3 keys limited to it; keys of every bucket stay personal", async () => {
    const member = org.members[0];
    const bucket = await req("POST", "/v1/buckets", member, { name: `own-bucket-${suffix}` });
    assert.equal(bucket.statusCode, 201, bucket.body);
    const key = (body: object) => req("POST", "/v1/buckets/keys", member, { permission: "read_write", ...body });
    const only = (await key({ name: "only", bucket_ids: [bucket.json().name] })).json();
    const every = (await key({ name: "every" })).json();

    const res = await req("POST", "/v1/org/assets", member, { kind: "bucket", id: bucket.json().name });
    assert.equal(res.statusCode, 201, res.body);
    expectError(await req("GET", `/v1/buckets/${bucket.json().id}`, member), 404, "not_found");
    assert.equal((await req("GET", `/v1/buckets/${bucket.json().id}`, member, undefined, ORG)).statusCode, 200);
    const keyIds = async (headers = {}) =>
      ((await req("GET", "/v1/buckets/keys", member, undefined, headers)).json() as { id: string }[]).map((k) => k.id);
    assert.ok((await keyIds(ORG)).includes(only.id), "the key limited to the bucket is the organization's now");
    assert.ok(!(await keyIds(ORG)).includes(every.id));
    assert.deepEqual(await keyIds(), [every.id]);
  });

  test("removing a designation: admin only (member 403 forbidden_role); the site returns to its creator", async () => {
    const member = org.members[1];
    const site = await createSite(s.t, member.token, { name: `back-${suffix}`, owner: "org" });
    const path = `/v1/org/assets/site/${site.id}`;
    expectError(await req("DELETE", path, member), 403, "forbidden_role");
    expectError(await req("DELETE", path, org.outsider), 404, "not_found");
    expectError(await req("DELETE", "/v1/org/assets/site/no-such-site", org.admins[0]), 404, "not_found");
    const res = await req("DELETE", `/v1/org/assets/static/${site.slug}`, org.admins[0]);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().creator, { id: member.id, email: member.email });
    assert.equal((await req("GET", `/v1/static/${site.slug}`, member)).statusCode, 200);
    assert.deepEqual(await edgeOwner(site.slug), { kind: "account", id: member.id });
    expectError(await req("DELETE", path, org.admins[0]), 404, "not_found");
    assert.ok(!(await items("/v1/org/resources", member)).some((a) => a.id === site.id));
  });

  test("outsiders get 404 on every asset route; scoped keys need org:read / org:write", async () => {
    for (const [method, url] of [
      ["GET", "/v1/org/assets"],
      ["GET", "/v1/org/resources"],
      ["POST", "/v1/org/assets"],
    ] as const)
      expectError(await req(method, url, org.outsider, method === "POST" ? { kind: "site", id: "x" } : undefined), 404);
    const readKey = await scopedKey(s.t.app, org.members[0].token, ["org:read"]);
    const reader = { ...org.members[0], token: readKey };
    assert.equal((await req("GET", "/v1/org/assets", reader)).statusCode, 200);
    expectError(await req("POST", "/v1/org/assets", reader, { kind: "site", id: "x" }), 403, "scope_insufficient");
  });

  test("leaving: company assets pass to the owner, personal ones stay the member's", async () => {
    const leaver = await signup(s.t.app);
    await s.t.db.query("INSERT INTO org_members (org_id, account_id, role) VALUES ($1, $2, 'member')", [
      org.id,
      leaver.id,
    ]);
    const company = await createSite(s.t, leaver.token, { name: `leaver-co-${suffix}`, owner: "org" });
    const personal = await createSite(s.t, leaver.token, { name: `leaver-me-${suffix}` });
    const res = await req("POST", "/v1/org/leave", leaver);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().assets_handed_over, 1);

    const row = (await items("/v1/org/resources", org.admins[0])).find((a) => a.id === company.id)!;
    assert.equal(row.creator.id, org.owner.id, "the owner is responsible for it now");
    assert.ok((await items("/v1/org/assets", org.owner)).some((a) => a.id === company.id));
    const mine = (await req("GET", "/v1/static", leaver)).json() as { id: string }[];
    assert.deepEqual(ids(mine), [personal.id]);
    expectError(await req("GET", `/v1/static/${company.slug}`, leaver), 404, "not_found");
    assert.deepEqual(await edgeOwner(personal.slug), { kind: "account", id: leaver.id });
  });

  test("deleting the organization returns every company asset to its creator", async () => {
    const other = await makeOrg(s.t, { admins: 0, members: 1 });
    const [member] = other.members;
    const site = await createSite(s.t, member.token, { name: `gone-co-${suffix}`, owner: "org" });
    const bucket = await req("POST", "/v1/buckets", member, { name: `gone-bucket-${suffix}`, owner: "org" });
    const ownerSite = await createSite(s.t, other.owner.token, { name: `gone-own-${suffix}`, owner: "org" });
    assert.equal((await items("/v1/org/resources", member)).length, 3);

    const res = await req("DELETE", "/v1/org", other.owner, { confirm: other.name });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().assets_returned, 3);
    assert.deepEqual(ids((await req("GET", "/v1/static", member)).json()), [site.id]);
    assert.deepEqual(ids((await req("GET", "/v1/buckets", member)).json()), [bucket.json().id]);
    assert.deepEqual(ids((await req("GET", "/v1/static", other.owner)).json()), [ownerSite.id]);
    assert.equal((await req("GET", `/v1/static/${site.slug}`, member)).statusCode, 200);
    assert.deepEqual(await edgeOwner(site.slug), { kind: "account", id: member.id });
    expectError(await req("GET", "/v1/static", member, undefined, ORG), 403, "forbidden_role");
  });
});
