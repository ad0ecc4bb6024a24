/**
 * Partner site locks and visitor sessions against the real edge (spec Partner features 10-13): a child's static
 * site locked to its tenant, a department (sub-departments included) or invited refs; one-time links that become a
 * visitor cookie and land on the page (once); anonymous visitors sent to the partner's visitor_login_url; vouched
 * visitors who do not match get 403; a new tenant drops the old tenant's invites; refs with e-mail or whitespace
 * and a lock without tenant are 400; a deleted child's locked site stays closed.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, expectError, OPERATOR_TOKEN, scopedKey, signup } from "../helpers/app.js";
import { within } from "../edge/lib.js";
import { APPS_DOMAIN, get, staticApp, tarGz, type StaticApp } from "../static/lib.js";

const LOGIN = "http://localhost:9/partner-login";

describe("partner site locks and visitor sessions", () => {
  let s: StaticApp;
  let key: string;
  let child: { id: string; token: string };
  const SLUG = "locked-site";
  const host = `${SLUG}.${APPS_DOMAIN}`;

  const asPartner = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", url: string, body?: unknown) =>
    call(s.t.app, { method, url, token: key, body });
  const lock = (body: Record<string, unknown>) => asPartner("PUT", `/v1/partner/sites/${SLUG}/access`, body);

  /** a one-time link for a visitor, followed: the cookie it set (asserting the redirect and its attributes) */
  async function visitor(v: { subject_ref: string; tenant_ref?: string; department_code?: string }) {
    const res = await asPartner("POST", "/v1/partner/visitor-sessions", {
      ...v,
      return_url: `http://${host}:${s.port}/page.html?x=1`,
    });
    assert.equal(res.statusCode, 201, res.body);
    const link = new URL(res.json().url);
    assert.equal(link.host, `${host}:${s.port}`);
    assert.equal(link.pathname, "/.platform/visitor");
    const followed = await get(s.port, SLUG, `${link.pathname}${link.search}`);
    assert.equal(followed.status, 302, followed.text);
    assert.equal(followed.headers.location, "/page.html?x=1");
    const setCookie = String(followed.headers["set-cookie"]);
    assert.match(setCookie, /^platform_visitor=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    return { cookie: setCookie.split(";")[0], link: `${link.pathname}${link.search}` };
  }

  const page = (cookie?: string) => get(s.port, SLUG, "/page.html", { headers: cookie ? { cookie } : {} });
  /** what the visitor gets once the edge followed the last change (NOTIFY partner_site_access) */
  const expectStatus = (cookie: string | undefined, status: number) =>
    within(`edge answers ${status}`, 3000, async () => (await page(cookie)).status === status);

  before(async () => {
    s = await staticApp();
    const partner = await signup(s.t.app);
    const made = await call(s.t.app, {
      method: "PUT",
      url: `/v1/operator/partners/${partner.id}`,
      token: OPERATOR_TOKEN,
      body: {},
    });
    assert.equal(made.statusCode, 200, made.body);
    key = await scopedKey(s.t.app, partner.token, ["partner:*"]);
    assert.equal((await asPartner("PATCH", "/v1/partner", { visitor_login_url: LOGIN })).statusCode, 200);
    const chart = await asPartner("PUT", "/v1/partner/departments", {
      departments: [{ code: "sales" }, { code: "sales-kr", parentCode: "sales" }, { code: "ops" }],
    });
    assert.equal(chart.statusCode, 200, chart.body);
    const made2 = await asPartner("POST", "/v1/partner/users", {
      external_ref: `site-${randomUUID()}`,
      token: { scopes: ["static:*"] },
    });
    assert.equal(made2.statusCode, 201, made2.body);
    child = { id: made2.json().id, token: made2.json().token.key };
    // the child deploys a static site
    const site = await call(s.t.app, {
      method: "POST",
      url: "/v1/static",
      token: child.token,
      body: { name: SLUG, slug: SLUG },
    });
    assert.equal(site.statusCode, 201, site.body);
    const dep = await call(s.t.app, { method: "POST", url: `/v1/static/${SLUG}/deployments`, token: child.token });
    assert.equal(dep.statusCode, 201, dep.body);
    const up = await s.t.app.inject({
      method: "PUT",
      url: `/v1/static/${SLUG}/deployments/${dep.json().id}/files`,
      headers: { authorization: `Bearer ${child.token}`, "content-type": "application/gzip" },
      payload: await tarGz({ "index.html": "home", "page.html": "secret page" }),
    });
    assert.equal(up.statusCode, 200, up.body);
    const fin = await call(s.t.app, {
      method: "POST",
      url: `/v1/static/${SLUG}/deployments/${dep.json().id}/finalize`,
      token: child.token,
    });
    assert.equal(fin.statusCode, 200, fin.body);
    assert.equal((await page()).text, "secret page");
  });
  after(async () => {
    await s?.close();
  });

  test("locks need a tenant and opaque refs; only the partner's children's sites", async () => {
    expectError(await lock({ mode: "tenant" }), 400, "tenant_required");
    for (const body of [
      { mode: "tenant", tenant_ref: "acme@example.com" },
      { mode: "tenant", tenant_ref: "acme corp" },
      { mode: "invited", tenant_ref: "acme", invited_refs: ["ok", "bob@example.com"] },
      { mode: "invited", tenant_ref: "acme", invited_refs: ["with\ttab"] },
    ]) {
      const res = await lock(body);
      expectError(res, 400, "invalid_request");
      assert.match(res.json().error.message, /tenant_ref|invited_refs/);
    }
    expectError(
      await lock({ mode: "department", tenant_ref: "acme", department_code: "nope" }),
      400,
      "unknown_department",
    );
    const vouch = (subject_ref: string) =>
      asPartner("POST", "/v1/partner/visitor-sessions", { subject_ref, tenant_ref: "acme", site: SLUG });
    expectError(await vouch("alice@example.com"), 400, "invalid_request");
    expectError(await vouch("alice smith"), 400, "invalid_request");
    // a site of no child of this partner (a plain user's) is unknown
    const plain = await signup(s.t.app);
    const other = await call(s.t.app, {
      method: "POST",
      url: "/v1/static",
      token: plain.token,
      body: { name: "plain-site", slug: "plain-site" },
    });
    assert.equal(other.statusCode, 201, other.body);
    expectError(await asPartner("GET", "/v1/partner/sites/plain-site/access"), 404, "not_found");
    const foreign = await asPartner("PUT", "/v1/partner/sites/plain-site/access", { mode: "tenant", tenant_ref: "x" });
    expectError(foreign, 404, "not_found");
    // the child's own tenant_ref is used when the request has none
    assert.equal((await asPartner("PATCH", "/v1/partner/users", { id: child.id, tenant_ref: "acme" })).statusCode, 200);
    const locked = await lock({ mode: "tenant" });
    assert.equal(locked.statusCode, 200, locked.body);
    assert.deepEqual([locked.json().mode, locked.json().tenant_ref], ["tenant", "acme"]);
  });

  test("tenant lock: anonymous 302 to visitor_login_url; the one-time link signs in once; other tenants 403", async () => {
    assert.equal((await lock({ mode: "tenant", tenant_ref: "acme" })).statusCode, 200);
    await expectStatus(undefined, 302);
    const anonymous = await page();
    const location = new URL(String(anonymous.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, LOGIN);
    // the absolute address the visitor asked for (the Host header as sent)
    assert.equal(location.searchParams.get("return_to"), `http://${host}/page.html`);
    assert.ok(!anonymous.text.includes("secret page"));

    // the child's own view of its site shows the lock in the organizations' words
    const view = await call(s.t.app, { url: `/v1/static/${SLUG}`, token: child.token });
    assert.equal(view.statusCode, 200, view.body);
    assert.equal(view.json().visibility, "company");

    const alice = await visitor({ subject_ref: "alice-1", tenant_ref: "acme" });
    const seen = await page(alice.cookie);
    assert.equal(seen.status, 200);
    assert.equal(seen.text, "secret page");
    // the link works once
    const again = await get(s.port, SLUG, alice.link);
    assert.equal(again.status, 403);
    assert.equal(again.headers["set-cookie"], undefined);
    // a forged cookie is anonymous
    assert.equal((await page("platform_visitor=forged")).status, 302);
    // a visitor of another tenant is refused
    const mallory = await visitor({ subject_ref: "alice-1", tenant_ref: "globex" });
    const refused = await page(mallory.cookie);
    assert.equal(refused.status, 403);
    assert.ok(!refused.text.includes("secret page"));
  });

  test("department lock admits sub-departments; changing the lock signs visitors out", async () => {
    assert.equal((await lock({ mode: "department", tenant_ref: "acme", department_code: "sales" })).statusCode, 200);
    const kr = await visitor({ subject_ref: "kim", tenant_ref: "acme", department_code: "sales-kr" });
    const ops = await visitor({ subject_ref: "oh", tenant_ref: "acme", department_code: "ops" });
    await expectStatus(kr.cookie, 200);
    assert.equal((await page(ops.cookie)).status, 403);
    assert.equal((await lock({ mode: "tenant", tenant_ref: "acme" })).statusCode, 200);
    // revoked on every edge process: back to the login
    await expectStatus(kr.cookie, 302);
  });

  test("invite lists match (site, tenant, subject); a new tenant drops the old tenant's list", async () => {
    const set = await lock({ mode: "invited", tenant_ref: "acme", invited_refs: ["alice-1"] });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().invited_refs, ["alice-1"]);
    const alice = await visitor({ subject_ref: "alice-1", tenant_ref: "acme" });
    const sameRefOtherTenant = await visitor({ subject_ref: "alice-1", tenant_ref: "globex" });
    const bob = await visitor({ subject_ref: "bob-2", tenant_ref: "acme" });
    await expectStatus(alice.cookie, 200);
    assert.equal((await page(sameRefOtherTenant.cookie)).status, 403);
    assert.equal((await page(bob.cookie)).status, 403);

    // the site moves to another tenant and back: acme's list is gone
    assert.equal((await lock({ mode: "invited", tenant_ref: "globex", invited_refs: ["carol"] })).statusCode, 200);
    const back = await lock({ mode: "invited", tenant_ref: "acme" });
    assert.deepEqual(back.json().invited_refs, []);
    const read = await asPartner("GET", `/v1/partner/sites/${SLUG}/access`);
    assert.deepEqual([read.json().mode, read.json().tenant_ref, read.json().invited_refs], ["invited", "acme", []]);
    const aliceAgain = await visitor({ subject_ref: "alice-1", tenant_ref: "acme" });
    await expectStatus(aliceAgain.cookie, 403);

    // unlocked: anyone
    assert.equal((await lock({ mode: "none" })).json().mode, "none");
    await expectStatus(undefined, 200);
  });

  test("a locked site of a deleted child stays closed: anonymous visitors and its old visitors go to the login", async () => {
    assert.equal((await lock({ mode: "tenant", tenant_ref: "acme" })).statusCode, 200);
    const alice = await visitor({ subject_ref: "alice-1", tenant_ref: "acme" });
    await expectStatus(alice.cookie, 200);
    assert.equal((await asPartner("DELETE", `/v1/partner/users/${child.id}`)).statusCode, 204);
    // its visitor sessions are revoked on every edge process; the lock stays bound to the site
    await expectStatus(alice.cookie, 302);
    const anonymous = await page();
    assert.equal(anonymous.status, 302);
    assert.equal(new URL(String(anonymous.headers.location)).pathname, "/partner-login");
    assert.ok(!anonymous.text.includes("secret page"));
  });
});
