/**
 * The organization itself through HTTP: creation (one per account), profile and role, settings (admin; billing
 * mode owner), deletion (owner, confirm by name), leaving (the owner cannot: 409), and acting for the organization
 * with X-Owner or {"owner":"org"}: what is created then is a company asset, listed in the company context only.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgs.test" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
});
after(async () => t?.close());

describe("organization", () => {
  test("create: 201 with the creator as owner; a second organization is 409; GET shows each caller's role", async () => {
    const res = await call(t.app, { url: "/v1/org", token: org.owner.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().role, "owner");
    assert.equal(res.json().member_count, 3);
    assert.equal(res.json().billing_mode, "personal");
    assert.equal((await call(t.app, { url: "/v1/org", token: org.members[0].token })).json().role, "member");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/org", token: org.members[0].token, body: { name: "Two" } }),
      409,
      "conflict",
    );
    expectError(await call(t.app, { url: "/v1/org", token: org.outsider.token }), 404, "not_found");
  });

  test("settings: admins change them, members get 403 forbidden_role, billing_mode is the owner's", async () => {
    const patch = (token: string, body: object) => call(t.app, { method: "PATCH", url: "/v1/org", token, body });
    const ok = await patch(org.admins[0].token, { default_visibility: "department", shared_approval: true });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().default_visibility, "department");
    expectError(await patch(org.members[0].token, { name: "X" }), 403, "forbidden_role");
    expectError(await patch(org.admins[0].token, { billing_mode: "prepaid" }), 403, "forbidden_role");
    expectError(await patch(org.admins[0].token, { max_visibility: "invited" }), 400, "invalid_request");
    const owner = await patch(org.owner.token, { billing_mode: "prepaid" });
    assert.equal(owner.json().billing_mode, "prepaid");
    await patch(org.owner.token, { billing_mode: "personal" });
  });

  test("scoped keys: org:read reads, account rows refuse them (403 scope_insufficient)", async () => {
    const key = await scopedKey(t.app, org.owner.token, ["org:read"]);
    assert.equal((await call(t.app, { url: "/v1/org", token: key })).statusCode, 200);
    expectError(await call(t.app, { method: "POST", url: "/v1/org/leave", token: key }), 403, "scope_insufficient");
    expectError(
      await call(t.app, { method: "PATCH", url: "/v1/org", token: key, body: {} }),
      403,
      "scope_insufficient",
    );
  });

  test("company context: X-Owner: org and owner:org create company assets, seen only in the company context", async () => {
    const member = org.members[0];
    const viaBody = await call(t.app, {
      method: "POST",
      url: "/v1/static",
      token: member.token,
      body: { name: "company-site", owner: "org" },
    });
    assert.equal(viaBody.statusCode, 201, viaBody.body);
    const viaHeader = await call(t.app, {
      method: "POST",
      url: "/v1/static",
      token: member.token,
      headers: ORG,
      body: { name: "company-two" },
    });
    assert.equal(viaHeader.statusCode, 201, viaHeader.body);
    const personal = await call(t.app, {
      method: "POST",
      url: "/v1/static",
      token: member.token,
      body: { name: "mine" },
    });
    assert.equal(personal.statusCode, 201, personal.body);

    const names = (res: { json: () => { name: string }[] }) =>
      res
        .json()
        .map((s) => s.name)
        .sort();
    assert.deepEqual(names(await call(t.app, { url: "/v1/static", token: member.token })), ["mine"]);
    const company = await call(t.app, { url: "/v1/static", token: org.admins[0].token, headers: ORG });
    assert.deepEqual(names(company), ["company-site", "company-two"]);
    // outsiders cannot act for an organization, and the header takes only me|org
    expectError(
      await call(t.app, { url: "/v1/static", token: org.outsider.token, headers: ORG }),
      403,
      "forbidden_role",
    );
    expectError(
      await call(t.app, { url: "/v1/static", token: member.token, headers: { "x-owner": "team" } }),
      400,
      "invalid_request",
    );
  });

  test("leave: the owner gets 409; a member leaves and is no longer in the organization", async () => {
    expectError(await call(t.app, { method: "POST", url: "/v1/org/leave", token: org.owner.token }), 409, "conflict");
    const leaver = await signup(t.app);
    await t.db.query("INSERT INTO org_members (org_id, account_id, role) VALUES ($1, $2, 'member')", [
      org.id,
      leaver.id,
    ]);
    const res = await call(t.app, { method: "POST", url: "/v1/org/leave", token: leaver.token });
    assert.equal(res.statusCode, 200, res.body);
    expectError(await call(t.app, { url: "/v1/org", token: leaver.token }), 404, "not_found");
  });

  test("delete: owner only, confirm must be the name; members are released", async () => {
    const other = await makeOrg(t, { admins: 1, members: 1 });
    const del = (token: string, confirm: string) =>
      call(t.app, { method: "DELETE", url: "/v1/org", token, body: { confirm } });
    expectError(await del(other.admins[0].token, other.name), 403, "forbidden_role");
    expectError(await del(other.owner.token, "wrong"), 400, "invalid_request");
    const res = await del(other.owner.token, other.name);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().members_removed, 3);
    expectError(await call(t.app, { url: "/v1/org", token: other.members[0].token }), 404, "not_found");
    const again = await call(t.app, {
      method: "POST",
      url: "/v1/org",
      token: other.members[0].token,
      body: { name: "New" },
    });
    assert.equal(again.statusCode, 201, again.body);
  });
});
