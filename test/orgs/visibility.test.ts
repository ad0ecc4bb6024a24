/**
 * Site visibility of company sites at the edge, with real requests on loopback: the organization's default
 * (company), public, department (with a sub-department and another department), invited with grants, private;
 * visitors without a session get the edge's sign-in page (never the content), signed-in non-members 403; the
 * sign-in form sets the host's session cookie and returns to the page; who may change visibility; the maximum.
 * The site's own view (GET /v1/static/{slug}) shows the visibility the edge enforces and where it comes from.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup } from "../helpers/app.js";
import { within } from "../edge/lib.js";
import { get, type StaticApp } from "../static/lib.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";
import { access, companySite, department, moveTo, orgSiteApp, postForm, sees, visit } from "./site-lib.js";

let s: StaticApp;
let org: TestOrg;
let creator: Person;
let sameDeptChild: Person;
let otherDept: Person;
let admin: Person;
const SLUG = "vis-site";

/** every visitor's view, once the edge followed the change (NOTIFY org_site_access) */
async function expectSeen(expected: Record<string, boolean>, who: Record<string, Person | null>) {
  const seen: Record<string, boolean> = {};
  await within(`edge follows ${JSON.stringify(expected)}`, 3000, async () => {
    for (const name of Object.keys(expected)) seen[name] = await sees(s.port, SLUG, who[name]);
    return Object.keys(expected).every((name) => seen[name] === expected[name]);
  }).catch((err: Error) => {
    throw new Error(`${err.message}; seen ${JSON.stringify(seen)}`);
  });
}

/** GET /v1/static/{slug}'s [visibility, visibility_source, site_visibility] */
async function shown(slug: string, headers: Record<string, string> = ORG) {
  const res = await call(s.t.app, { url: `/v1/static/${slug}`, token: creator.token, headers });
  assert.equal(res.statusCode, 200, res.body);
  return [res.json().visibility, res.json().visibility_source, res.json().site_visibility];
}

const everyone = () => ({
  anonymous: null,
  creator,
  sameDeptChild,
  otherDept,
  admin,
  owner: org.owner,
  outsider: org.outsider,
});

before(async () => {
  s = await orgSiteApp();
  org = await makeOrg(s.t, { admins: 1, members: 3 });
  [creator, sameDeptChild, otherDept] = org.members;
  admin = org.admins[0];
  const sales = await department(s.t, org.id, "sales");
  const salesKr = await department(s.t, org.id, "sales-kr", { parent: sales });
  const ops = await department(s.t, org.id, "ops");
  await moveTo(s.t, creator, sales);
  await moveTo(s.t, sameDeptChild, salesKr);
  await moveTo(s.t, otherDept, ops);
  await companySite(s.t, creator, SLUG);
});
after(async () => s?.close());

describe("site visibility at the edge", () => {
  test("default company: members see it, no session gets the sign-in page, outsiders 403", async () => {
    const res = await access(s.t, creator, SLUG);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().visibility, "company");
    assert.equal(res.json().inherited, true);
    assert.equal(res.json().responsible_account_id, creator.id);
    assert.deepEqual([res.json().visibility_source, res.json().site_visibility], ["organization_default", null]);
    // the site's own view says what the edge enforces (below), not "public"
    assert.deepEqual(await shown(SLUG), ["company", "organization_default", null]);

    const anonymous = await visit(s.port, SLUG, null, "/page.html");
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.text, /<form method="post" action="\/.platform\/sign-in">/);
    assert.match(anonymous.text, /name="next" value="\/page.html"/);
    assert.ok(!anonymous.text.includes("vis-site page"));
    assert.equal(anonymous.headers["cache-control"], "no-store");
    const stranger = await visit(s.port, SLUG, org.outsider);
    assert.equal(stranger.status, 403);
    assert.ok(!stranger.text.includes(`${SLUG} content`));
    await expectSeen(
      {
        anonymous: false,
        creator: true,
        sameDeptChild: true,
        otherDept: true,
        admin: true,
        owner: true,
        outsider: false,
      },
      everyone(),
    );
  });

  test("public: anyone, without signing in", async () => {
    const res = await access(s.t, creator, SLUG, "public");
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().visibility, "public");
    assert.equal(res.json().inherited, false);
    await expectSeen(
      {
        anonymous: true,
        creator: true,
        sameDeptChild: true,
        otherDept: true,
        admin: true,
        owner: true,
        outsider: true,
      },
      everyone(),
    );
  });

  test("department: the responsible member's department and its sub-departments, plus admins", async () => {
    assert.equal((await access(s.t, creator, SLUG, "department")).statusCode, 200);
    await expectSeen(
      {
        anonymous: false,
        creator: true,
        sameDeptChild: true,
        otherDept: false,
        admin: true,
        owner: true,
        outsider: false,
      },
      everyone(),
    );
    const refused = await visit(s.port, SLUG, otherDept);
    assert.equal(refused.status, 403);
  });

  test("invited: granted members only; grants are listed, revoked, and only for members", async () => {
    assert.equal((await access(s.t, creator, SLUG, "invited")).statusCode, 200);
    await expectSeen(
      { anonymous: false, creator: true, sameDeptChild: false, otherDept: false, admin: true, outsider: false },
      everyone(),
    );
    const grant = await call(s.t.app, {
      method: "POST",
      url: `/v1/org/sites/${SLUG}/access/grants`,
      token: creator.token,
      body: { email: otherDept.email.toUpperCase() },
    });
    assert.equal(grant.statusCode, 201, grant.body);
    assert.equal(grant.json().account_id, otherDept.id);
    await expectSeen({ otherDept: true, sameDeptChild: false }, everyone());
    const listed = (await access(s.t, admin, SLUG)).json();
    assert.deepEqual(
      listed.grants.map((g: { email: string }) => g.email),
      [otherDept.email],
    );
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: `/v1/org/sites/${SLUG}/access/grants`,
        token: creator.token,
        body: { email: org.outsider.email },
      }),
      404,
      "not_found",
    );
    // only the responsible member or an admin grants
    expectError(
      await call(s.t.app, {
        method: "POST",
        url: `/v1/org/sites/${SLUG}/access/grants`,
        token: sameDeptChild.token,
        body: { email: sameDeptChild.email },
      }),
      403,
      "forbidden_role",
    );
    const revoke = await call(s.t.app, {
      method: "DELETE",
      url: `/v1/org/sites/${SLUG}/access/grants/${otherDept.id}`,
      token: admin.token,
    });
    assert.equal(revoke.statusCode, 204, revoke.body);
    await expectSeen({ otherDept: false }, everyone());
    expectError(
      await call(s.t.app, {
        method: "DELETE",
        url: `/v1/org/sites/${SLUG}/access/grants/${otherDept.id}`,
        token: admin.token,
      }),
      404,
      "not_found",
    );
  });

  test("private: the responsible member, admins and the owner", async () => {
    assert.equal((await access(s.t, creator, SLUG, "private")).statusCode, 200);
    await expectSeen(
      {
        anonymous: false,
        creator: true,
        sameDeptChild: false,
        otherDept: false,
        admin: true,
        owner: true,
        outsider: false,
      },
      everyone(),
    );
  });

  test("who changes it: the responsible member or an admin; outsiders 404; unknown and personal sites 404", async () => {
    expectError(await access(s.t, sameDeptChild, SLUG, "company"), 403, "forbidden_role");
    expectError(await access(s.t, org.outsider, SLUG), 404, "not_found");
    expectError(await access(s.t, org.outsider, SLUG, "public"), 404, "not_found");
    expectError(await access(s.t, creator, "no-such-site"), 404, "not_found");
    const personal = await call(s.t.app, {
      method: "POST",
      url: "/v1/static",
      token: creator.token,
      body: { name: "mine", slug: "vis-mine" },
    });
    assert.equal(personal.statusCode, 201, personal.body);
    expectError(await access(s.t, creator, "vis-mine"), 404, "not_found");
    assert.deepEqual(await shown("vis-mine", {}), ["public", "site", "public"]);
    const byAdmin = await access(s.t, admin, SLUG, "company");
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    expectError(await access(s.t, creator, SLUG, "bogus"), 400);
  });

  test("max_visibility: wider is 403 deploy_rule_violation, and the edge never serves above it", async () => {
    assert.equal((await access(s.t, creator, SLUG, "public")).statusCode, 200);
    await expectSeen({ anonymous: true }, everyone());
    assert.deepEqual(await shown(SLUG), ["public", "site", "public"]);
    const patch = await call(s.t.app, {
      method: "PATCH",
      url: "/v1/org",
      token: admin.token,
      body: { max_visibility: "company" },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    await expectSeen({ anonymous: false, creator: true, outsider: false }, everyone());
    const capped = (await access(s.t, creator, SLUG)).json();
    assert.deepEqual(
      [capped.visibility, capped.visibility_source, capped.site_visibility],
      ["company", "organization_maximum", "public"],
    );
    assert.deepEqual(await shown(SLUG), ["company", "organization_maximum", "public"]);
    expectError(await access(s.t, creator, SLUG, "public"), 403, "deploy_rule_violation");
    await call(s.t.app, { method: "PATCH", url: "/v1/org", token: admin.token, body: { max_visibility: "public" } });
    await access(s.t, creator, SLUG, "company");
  });

  test("removing a member: they lose the site at once", async () => {
    const leaver = await signup(s.t.app);
    await s.t.db.query("INSERT INTO org_members (org_id, account_id, role) VALUES ($1, $2, 'member')", [
      org.id,
      leaver.id,
    ]);
    await within("a new member sees it", 3000, () => sees(s.port, SLUG, leaver));
    await s.t.db.query("DELETE FROM org_members WHERE account_id = $1", [leaver.id]);
    await within("a removed member does not", 3000, async () => !(await sees(s.port, SLUG, leaver)));
  });
});

describe("the edge's sign-in page", () => {
  const form = (body: string, headers: Record<string, string> = {}) =>
    postForm(s.port, SLUG, "/.platform/sign-in", body, headers);

  test("the form signs in, sets the host's session cookie and returns to the page", async () => {
    const body = new URLSearchParams({ email: creator.email, password: "correct horse battery", next: "/page.html" });
    const res = await form(body.toString(), { origin: `http://${SLUG}.apps.static.test` });
    assert.equal(res.status, 303, res.text);
    assert.equal(res.headers.location, "/page.html");
    const cookie = String(res.headers["set-cookie"]);
    assert.match(cookie, /^platform_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const session = cookie.split(";")[0];
    const page = await get(s.port, SLUG, "/page.html", { headers: { cookie: session } });
    assert.equal(page.status, 200);
    assert.equal(page.text, `${SLUG} page`);
  });

  test("a wrong password shows the form again; other sites' posts and foreign return addresses are refused", async () => {
    const wrong = await form(new URLSearchParams({ email: creator.email, password: "nope", next: "/" }).toString());
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /The e-mail or password is wrong/);
    assert.equal(wrong.headers["set-cookie"], undefined);
    const body = new URLSearchParams({
      email: creator.email,
      password: "correct horse battery",
      next: "//evil.test/x",
    });
    const crossSite = await form(body.toString(), { origin: "https://evil.test" });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.headers["set-cookie"], undefined);
    const fetchSite = await form(body.toString(), { "sec-fetch-site": "cross-site" });
    assert.equal(fetchSite.status, 403);
    const ok = await form(body.toString());
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.location, "/");
    const unknown = await postForm(s.port, "nothing-here", "/.platform/sign-in", "");
    assert.equal(unknown.status, 404);
  });
});
