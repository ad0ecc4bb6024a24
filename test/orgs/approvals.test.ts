/**
 * Sharing approvals and deploy-control: with shared approval on, a member's widening waits (202 pending) for the
 * approver of their department (or an admin) and the edge follows the approval; narrowing and admins apply at
 * once; rejections, double decisions (409), superseded requests, who may decide (403); the admins' deploy-control
 * overview and bulk apply with only_wider, never above the maximum; member 403 and outsider 404 on admin rows.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError } from "../helpers/app.js";
import { within } from "../edge/lib.js";
import type { StaticApp } from "../static/lib.js";
import { makeOrg, type Person, type TestOrg } from "./lib.js";
import { access, companySite, department, moveTo, orgSiteApp, sees } from "./site-lib.js";

let s: StaticApp;
let org: TestOrg;
let requester: Person;
let colleague: Person;
let approver: Person;
let admin: Person;
let noDept: Person;
const SLUG = "appr-site";

const approvals = (who: Person) => call(s.t.app, { url: "/v1/org/approvals", token: who.token });
const decide = (who: Person, id: string, verb: "approve" | "reject", body?: object) =>
  call(s.t.app, { method: "POST", url: `/v1/org/approvals/${id}/${verb}`, token: who.token, body });
const edgeSees = (who: Person | null, slug = SLUG) => sees(s.port, slug, who);

before(async () => {
  s = await orgSiteApp();
  org = await makeOrg(s.t, { admins: 1, members: 4 });
  [requester, colleague, approver, noDept] = org.members;
  admin = org.admins[0];
  const parent = await department(s.t, org.id, "eng", { approver: approver.email.toUpperCase() });
  const team = await department(s.t, org.id, "eng-web", { parent });
  await moveTo(s.t, requester, team);
  await moveTo(s.t, colleague, team);
  await moveTo(s.t, approver, parent);
  await companySite(s.t, requester, SLUG);
  await companySite(s.t, noDept, "appr-other");
  const on = await call(s.t.app, {
    method: "PATCH",
    url: "/v1/org",
    token: admin.token,
    body: { shared_approval: true },
  });
  assert.equal(on.statusCode, 200, on.body);
});
after(async () => s?.close());

describe("sharing approvals", () => {
  test("narrowing applies at once; widening waits for the department's approver, then the edge follows", async () => {
    const narrowed = await access(s.t, requester, SLUG, "department");
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    assert.equal(narrowed.json().visibility, "department");

    const widened = await access(s.t, requester, SLUG, "public");
    assert.equal(widened.statusCode, 202, widened.body);
    assert.equal(widened.json().status, "pending");
    const id = widened.json().approval_id;
    assert.equal(widened.json().approval.from_visibility, "department");
    assert.equal(widened.json().approval.to_visibility, "public");
    const view = (await access(s.t, requester, SLUG)).json();
    assert.equal(view.visibility, "department");
    assert.deepEqual(
      view.pending_approvals.map((a: { id: string }) => a.id),
      [id],
    );
    assert.equal(await edgeSees(null), false);

    // the approver of the nearest department up the tree with one, and admins, see it; nobody else
    const ids = async (who: Person) => (await approvals(who)).json().items.map((a: { id: string }) => a.id);
    assert.deepEqual(await ids(approver), [id]);
    assert.deepEqual(await ids(admin), [id]);
    assert.deepEqual(await ids(colleague), []);
    assert.deepEqual(await ids(requester), []);
    expectError(await decide(colleague, id, "approve"), 403, "forbidden_role");
    expectError(await decide(requester, id, "approve"), 403, "forbidden_role");
    expectError(await approvals(org.outsider), 404, "not_found");
    expectError(await decide(org.outsider, id, "approve"), 404, "not_found");

    const approved = await decide(approver, id, "approve");
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().status, "approved");
    assert.equal(approved.json().decided_by, approver.id);
    await within("the edge serves the approved visibility", 3000, () => edgeSees(null));
    assert.equal((await access(s.t, requester, SLUG)).json().visibility, "public");
    expectError(await decide(approver, id, "approve"), 409, "conflict");
    expectError(await decide(admin, id, "reject"), 409, "conflict");
  });

  test("reject with a note; the visibility stays", async () => {
    assert.equal((await access(s.t, requester, SLUG, "invited")).statusCode, 200);
    const pending = await access(s.t, requester, SLUG, "company");
    assert.equal(pending.statusCode, 202, pending.body);
    const rejected = await decide(admin, pending.json().approval_id, "reject", { note: "not yet" });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(rejected.json().status, "rejected");
    assert.equal(rejected.json().note, "not yet");
    assert.equal((await access(s.t, requester, SLUG)).json().visibility, "invited");
    assert.equal(await edgeSees(colleague), false);
    expectError(await decide(approver, pending.json().approval_id, "approve"), 409, "conflict");
    // a reject without a body
    const again = await access(s.t, requester, SLUG, "company");
    assert.equal((await decide(approver, again.json().approval_id, "reject")).statusCode, 200);
  });

  test("a newer request or a direct change supersedes a pending one; admins apply at once", async () => {
    const first = (await access(s.t, requester, SLUG, "department")).json();
    assert.equal(first.status, "pending");
    const second = (await access(s.t, requester, SLUG, "company")).json();
    assert.equal(second.status, "pending");
    expectError(await decide(approver, first.approval_id, "approve"), 409, "conflict");
    const byAdmin = await access(s.t, admin, SLUG, "public");
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    assert.equal(byAdmin.json().pending_approvals.length, 0);
    expectError(await decide(approver, second.approval_id, "approve"), 409, "conflict");
    await within("the edge follows the admin", 3000, () => edgeSees(null));
  });

  test("a requester without a department: only admins decide", async () => {
    const pending = await access(s.t, noDept, "appr-other", "public");
    assert.equal(pending.statusCode, 202, pending.body);
    assert.equal(pending.json().approval.department_id, null);
    assert.deepEqual((await approvals(approver)).json().items, []);
    expectError(await decide(approver, pending.json().approval_id, "approve"), 403, "forbidden_role");
    assert.equal((await decide(admin, pending.json().approval_id, "approve")).statusCode, 200);
    await within("approved by an admin", 3000, () => edgeSees(null, "appr-other"));
  });
});

describe("deploy-control", () => {
  const control = (who: Person) => call(s.t.app, { url: "/v1/org/deploy-control", token: who.token });
  const apply = (who: Person, body: object) =>
    call(s.t.app, { method: "POST", url: "/v1/org/deploy-control/apply", token: who.token, body });
  const visibilityOf = async (slug: string) => (await access(s.t, admin, slug)).json().visibility;

  test("members get 403, outsiders 404", async () => {
    expectError(await control(requester), 403, "forbidden_role");
    expectError(await apply(requester, { visibility: "company" }), 403, "forbidden_role");
    expectError(await control(org.outsider), 404, "not_found");
    expectError(await apply(org.outsider, { visibility: "company" }), 404, "not_found");
  });

  test("the overview: policy, inherited department blocks, every company site's visibility", async () => {
    await s.t.db.query("UPDATE org_departments SET deploy_blocked = true WHERE org_id = $1 AND code = 'eng'", [org.id]);
    const res = await control(admin);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.policy.shared_approval, true);
    assert.equal(body.policy.default_visibility, "company");
    assert.equal(body.policy.max_visibility, "public");
    const blocked = Object.fromEntries(
      body.departments.map((d: { code: string; blocked: boolean }) => [d.code, d.blocked]),
    );
    assert.deepEqual(blocked, { eng: true, "eng-web": true });
    const sites = Object.fromEntries(
      body.sites.map((x: { slug: string; visibility: string; responsible_account_id: string }) => [
        x.slug,
        [x.visibility, x.responsible_account_id],
      ]),
    );
    assert.deepEqual(sites, { [SLUG]: ["public", requester.id], "appr-other": ["public", noDept.id] });
  });

  test("apply: only_wider widens the narrower sites only; without it every site; never above the maximum", async () => {
    assert.equal((await access(s.t, admin, "appr-other", "private")).statusCode, 200);
    const wider = await apply(admin, { visibility: "company", only_wider: true });
    assert.equal(wider.statusCode, 200, wider.body);
    assert.deepEqual(wider.json(), { visibility: "company", only_wider: true, changed: 1, unchanged: 1 });
    assert.equal(await visibilityOf(SLUG), "public");
    assert.equal(await visibilityOf("appr-other"), "company");

    const all = await apply(admin, { visibility: "department" });
    assert.equal(all.json().changed, 2);
    assert.equal(await visibilityOf(SLUG), "department");
    assert.equal(await visibilityOf("appr-other"), "department");
    await within("the edge follows the bulk apply", 3000, async () => !(await edgeSees(null)));
    assert.equal(await edgeSees(colleague), true);
    assert.equal(await edgeSees(approver), false);

    await call(s.t.app, { method: "PATCH", url: "/v1/org", token: admin.token, body: { max_visibility: "company" } });
    expectError(await apply(admin, { visibility: "public" }), 403, "deploy_rule_violation");
    expectError(await apply(admin, { visibility: "everyone" }), 400);
  });
});
