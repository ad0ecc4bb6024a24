/**
 * Member management through HTTP: role and department changes (department by id or code), removal with a company
 * and a personal asset, and who may do what: admins manage members, only the owner grants admin or changes and
 * removes admins, nobody changes or removes the owner (409), nobody removes themselves (409: leave instead).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { addMember, makeOrg, type Person, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;
const dept = { eng: randomUUID(), ops: randomUUID(), foreign: randomUUID() };

const patch = (token: string, id: string, body: object) =>
  call(t.app, { method: "PATCH", url: `/v1/org/members/${id}`, token, body });
const remove = (token: string, id: string) => call(t.app, { method: "DELETE", url: `/v1/org/members/${id}`, token });

/** A fresh member of the test organization. */
async function newMember(role: "admin" | "member" = "member"): Promise<Person> {
  const p = await signup(t.app);
  await addMember(t, org.id, p, role);
  return p;
}

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.members.test" } });
  org = await makeOrg(t, { admins: 2, members: 1 });
  const other = await makeOrg(t, { admins: 0, members: 0 });
  const insert = "INSERT INTO org_departments (id, org_id, code, name) VALUES ($1, $2, $3, $4)";
  await t.db.query(insert, [dept.eng, org.id, "eng", "Engineering"]);
  await t.db.query(insert, [dept.ops, org.id, "ops", "Operations"]);
  await t.db.query(insert, [dept.foreign, other.id, "sales", "Sales"]);
});
after(async () => t?.close());

describe("member changes", () => {
  test("department by code, by id, or none; unknown or another organization's departments are 400", async () => {
    const m = await newMember();
    const admin = org.admins[0].token;
    const byCode = await patch(admin, m.id, { department_code: "eng" });
    assert.equal(byCode.statusCode, 200, byCode.body);
    assert.equal(byCode.json().department_id, dept.eng);
    assert.equal(byCode.json().department_name, "Engineering");
    assert.equal(byCode.json().role, "member");
    const byId = await patch(admin, m.id, { department_id: dept.ops });
    assert.equal(byId.json().department_code, "ops");
    const none = await patch(admin, m.id, { department_id: null });
    assert.equal(none.json().department_id, null);
    expectError(await patch(admin, m.id, { department_code: "nope" }), 400, "unknown_department");
    expectError(await patch(admin, m.id, { department_id: dept.foreign }), 400, "unknown_department");
    expectError(await patch(admin, m.id, { department_id: dept.eng, department_code: "eng" }), 400, "invalid_request");
    expectError(await patch(admin, m.id, {}), 400, "invalid_request");
    expectError(await patch(admin, m.id, { role: "owner" }), 400);
    const listed = (await call(t.app, { url: "/v1/org/members", token: m.token })).json().items;
    assert.equal(listed.find((x: { id: string }) => x.id === m.id).department_id, null);
  });

  test("roles: only the owner grants or revokes admin and changes admins; the owner is 409", async () => {
    const m = await newMember();
    const [admin, otherAdmin] = org.admins;
    expectError(await patch(admin.token, m.id, { role: "admin" }), 403, "forbidden_role");
    expectError(await patch(admin.token, otherAdmin.id, { role: "member" }), 403, "forbidden_role");
    expectError(await patch(admin.token, otherAdmin.id, { department_code: "eng" }), 403, "forbidden_role");
    expectError(await patch(admin.token, org.owner.id, { department_code: "eng" }), 409, "conflict");
    expectError(await patch(org.owner.token, org.owner.id, { role: "member" }), 409, "conflict");

    const granted = await patch(org.owner.token, m.id, { role: "admin", department_code: "ops" });
    assert.equal(granted.statusCode, 200, granted.body);
    assert.equal(granted.json().role, "admin");
    assert.equal(granted.json().department_code, "ops");
    // the new admin can now read the admin rows
    assert.equal((await call(t.app, { url: "/v1/org/invites", token: m.token })).statusCode, 200);
    const revoked = await patch(org.owner.token, m.id, { role: "member" });
    assert.equal(revoked.json().role, "member");
    assert.equal(revoked.json().department_code, "ops", "a role change keeps the department");
    expectError(await call(t.app, { url: "/v1/org/invites", token: m.token }), 403, "forbidden_role");
  });

  test("callers: members 403, outsiders 404, unknown or foreign ids 404, scoped keys 403", async () => {
    const m = org.members[0];
    expectError(await patch(m.token, org.admins[0].id, { department_code: "eng" }), 403, "forbidden_role");
    expectError(await remove(m.token, org.admins[0].id), 403, "forbidden_role");
    expectError(await patch(org.outsider.token, m.id, { department_code: "eng" }), 404, "not_found");
    expectError(await remove(org.outsider.token, m.id), 404, "not_found");
    const admin = org.admins[0].token;
    expectError(await patch(admin, randomUUID(), { department_code: "eng" }), 404, "not_found");
    expectError(await patch(admin, "not-an-id", { department_code: "eng" }), 404, "not_found");
    expectError(await remove(admin, org.outsider.id), 404, "not_found");
    const key = await scopedKey(t.app, org.owner.token, ["org:write"]);
    expectError(await patch(key, m.id, { department_code: "eng" }), 403, "scope_insufficient");
    expectError(await remove(key, m.id), 403, "scope_insufficient");
  });
});

describe("member removal", () => {
  test("company assets stay the organization's, personal ones stay the member's; the member is out", async () => {
    const m = await newMember();
    const site = async (body: object) => {
      const res = await call(t.app, { method: "POST", url: "/v1/static", token: m.token, body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const company = await site({ name: "company-asset", owner: "org" });
    const personal = await site({ name: "personal-asset" });

    const res = await remove(org.admins[0].token, m.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().removed, true);
    assert.equal(typeof res.json().assets_handed_over, "number");
    expectError(await call(t.app, { url: "/v1/org", token: m.token }), 404, "not_found");
    const members = (await call(t.app, { url: "/v1/org/members", token: org.owner.token })).json().items;
    assert.ok(!members.some((x: { id: string }) => x.id === m.id));

    const owners = await t.db.query<{ id: string; owner_kind: string; owner_id: string }>(
      "SELECT id, owner_kind, owner_id FROM static_sites WHERE id = ANY($1::uuid[])",
      [[company, personal]],
    );
    const byId = new Map(owners.rows.map((r) => [r.id, r]));
    assert.deepEqual([byId.get(company)!.owner_kind, byId.get(company)!.owner_id], ["org", org.id]);
    assert.deepEqual([byId.get(personal)!.owner_kind, byId.get(personal)!.owner_id], ["account", m.id]);
    const mine = (await call(t.app, { url: "/v1/static", token: m.token })).json();
    assert.deepEqual(
      mine.map((s: { name: string }) => s.name),
      ["personal-asset"],
    );
    const theirs = (await call(t.app, { url: "/v1/static", token: org.owner.token, headers: { "x-owner": "org" } }))
      .json()
      .map((s: { name: string }) => s.name);
    assert.ok(theirs.includes("company-asset"));
    // removing again: no such member
    expectError(await remove(org.admins[0].token, m.id), 404, "not_found");
  });

  test("the owner and oneself cannot be removed (409); admins are the owner's to remove", async () => {
    const [admin, otherAdmin] = org.admins;
    expectError(await remove(admin.token, org.owner.id), 409, "conflict");
    expectError(await remove(org.owner.token, org.owner.id), 409, "conflict");
    const self = await remove(admin.token, admin.id);
    expectError(self, 409, "conflict");
    assert.match(self.json().error.message, /leave/);
    expectError(await remove(admin.token, otherAdmin.id), 403, "forbidden_role");
    const extra = await newMember("admin");
    const res = await remove(org.owner.token, extra.id);
    assert.equal(res.statusCode, 200, res.body);
    expectError(await call(t.app, { url: "/v1/org", token: extra.token }), 404, "not_found");
  });
});
