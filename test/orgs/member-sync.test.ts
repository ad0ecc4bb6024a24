/**
 * The member syncs through HTTP: JSON by e-mail (role and department of existing members, member_not_found for
 * anyone else, per-item unknown_department, the owner's row skipped, idempotent, implicit_deletion removing the
 * unlisted but the owner and the caller) and the CSV (email,department_code,role; mistakes named by line). Both are
 * Account rows for admins: scoped keys get 403 scope_insufficient.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { makeOrg, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp();
  org = await makeOrg(t, { admins: 1, members: 3 });
  const res = await call(t.app, {
    method: "POST",
    url: "/v1/org/departments/sync",
    token: org.owner.token,
    body: {
      departments: [
        { code: "ENG", name: "Engineering" },
        { code: "WEB", name: "Web", parent_code: "ENG" },
        { code: "SALES", name: "Sales" },
      ],
    },
  });
  assert.equal(res.statusCode, 200, res.body);
});
after(async () => t?.close());

const admin = () => org.admins[0].token;
/** role changes are the owner's (an admin's are refused per item: test/orgs/role-matrix.test.ts) */
const owner = () => org.owner.token;
const sync = (token: string, members: object[], implicit_deletion = false) =>
  call(t.app, { method: "POST", url: "/v1/org/members/sync", token, body: { members, implicit_deletion } });
const csv = (token: string, text: string) =>
  call(t.app, {
    method: "POST",
    url: "/v1/org/members/csv",
    token,
    headers: { "content-type": "text/csv; charset=utf-8" },
    body: text,
  });
const members = async () => {
  const res = await call(t.app, { url: "/v1/org/members", token: admin() });
  return new Map<string, any>((res.json().items as any[]).map((m) => [m.email, m]));
};

describe("member sync", () => {
  test("JSON: roles and departments by e-mail, member_not_found, unknown_department, the owner's row skipped; again: all skip", async () => {
    const [a, b, c] = org.members;
    const stranger = await signup(t.app);
    const list = [
      { email: a.email.toUpperCase(), department_code: "WEB", role: "admin" },
      { email: b.email, department_code: "SALES" },
      { email: c.email, department_code: "NOPE", role: "admin" },
      { email: stranger.email, department_code: "ENG" },
      { email: "nobody-at-all@example.com" },
      { email: org.owner.email, department_code: "ENG", role: "member" },
    ];
    const res = await sync(owner(), list);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().items.map((i: any) => [i.email, i.result, i.error ?? null]),
      [
        [a.email, "update", null],
        [b.email, "update", null],
        [c.email, "error", "unknown_department"],
        [stranger.email, "member_not_found", null],
        ["nobody-at-all@example.com", "member_not_found", null],
        [org.owner.email, "skip", null],
      ],
    );
    assert.deepEqual(res.json().counts, {
      insert: 0,
      update: 2,
      skip: 1,
      delete: 0,
      member_not_found: 2,
      error: 1,
    });
    const now = await members();
    assert.equal(now.get(a.email).role, "admin");
    assert.equal(now.get(a.email).department_code, "WEB");
    assert.equal(now.get(b.email).role, "member");
    assert.equal(now.get(b.email).department_code, "SALES");
    assert.equal(now.get(c.email).role, "member", "an item in error changes nothing");
    assert.equal(now.get(org.owner.email).role, "owner");
    assert.equal(now.has(stranger.email), false, "nobody joins through a sync");
    const again = await sync(owner(), list);
    assert.deepEqual(again.json().counts, {
      insert: 0,
      update: 0,
      skip: 3,
      delete: 0,
      member_not_found: 2,
      error: 1,
    });
  });

  test("omitted fields stay, department_code null unassigns; a duplicate e-mail is 400", async () => {
    const [a] = org.members;
    const res = await sync(owner(), [{ email: a.email, role: "member" }]);
    assert.deepEqual(res.json().counts.update, 1);
    assert.equal((await members()).get(a.email).department_code, "WEB");
    await sync(admin(), [{ email: a.email, department_code: null }]);
    assert.equal((await members()).get(a.email).department_id, null);
    assert.equal((await members()).get(a.email).role, "member");
    const dup = await sync(admin(), [{ email: a.email }, { email: a.email.toUpperCase() }]);
    expectError(dup, 400, "invalid_request");
    assert.match(dup.json().error.message, /appears twice/);
    expectError(await sync(admin(), [{ email: a.email, role: "owner" }]), 400, "invalid_request");
  });

  test("CSV: email,department_code,role with per-line results; mistakes are 400 naming the line", async () => {
    const [a, b] = org.members;
    const text = `email,department_code,role\n${a.email},ENG,\n\n${b.email},,Admin\nghost@example.com,ENG,member\n`;
    const res = await csv(owner(), text);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().items.map((i: any) => [i.email, i.result, i.line]),
      [
        [a.email, "update", 2],
        [b.email, "update", 4],
        ["ghost@example.com", "member_not_found", 5],
      ],
    );
    const now = await members();
    assert.equal(now.get(a.email).department_code, "ENG");
    assert.equal(now.get(a.email).role, "member", "an empty role is unchanged");
    assert.equal(now.get(b.email).department_id, null, "an empty department_code is none");
    assert.equal(now.get(b.email).role, "admin");
    const viaJson = await call(t.app, {
      method: "POST",
      url: "/v1/org/members/csv",
      token: owner(),
      body: { csv: text },
    });
    assert.deepEqual(viaJson.json().counts.skip, 2);
    const cases: [string, RegExp][] = [
      [`email,role\n${a.email},owner\n`, /^line 2: role "owner" is not admin or member/],
      ["email,role\nnot-an-address,member\n", /^line 2: email "not-an-address" is not an e-mail address/],
      ["department_code,role\nENG,member\n", /^line 1: the header row must name the columns email/],
    ];
    for (const [body, message] of cases) {
      const r = await csv(admin(), body);
      expectError(r, 400, "invalid_request");
      assert.match(r.json().error.message, message);
    }
  });

  test("implicit_deletion removes unlisted members but never the owner or the caller", async () => {
    const other = await makeOrg(t, { admins: 1, members: 2 });
    const [keep, drop] = other.members;
    const res = await sync(other.admins[0].token, [{ email: keep.email }], true);
    assert.equal(res.statusCode, 200, res.body);
    const results = new Map(res.json().items.map((i: any) => [i.email, i]));
    assert.equal((results.get(keep.email) as any).result, "skip");
    assert.equal((results.get(drop.email) as any).result, "delete");
    assert.equal((results.get(other.owner.email) as any).result, "skip");
    assert.equal((results.get(other.admins[0].email) as any).result, "skip");
    assert.match((results.get(other.admins[0].email) as any).message, /caller/);
    expectError(await call(t.app, { url: "/v1/org", token: drop.token }), 404, "not_found");
    assert.equal((await call(t.app, { url: "/v1/org", token: keep.token })).statusCode, 200);
    const again = await sync(other.admins[0].token, [{ email: keep.email }], true);
    assert.equal(again.json().counts.delete, 0);
  });

  test("who may: admins only (403 forbidden_role), outsiders 404, scoped keys 403 scope_insufficient", async () => {
    const member = org.members[2].token;
    expectError(await sync(member, []), 403, "forbidden_role");
    expectError(await csv(member, "email\n"), 403, "forbidden_role");
    expectError(await sync(org.outsider.token, []), 404, "not_found");
    expectError(await csv(org.outsider.token, "email\n"), 404, "not_found");
    const key = await scopedKey(t.app, org.admins[0].token, ["org:read", "org:write"]);
    expectError(await sync(key, []), 403, "scope_insufficient");
    expectError(await csv(key, "email\n"), 403, "scope_insufficient");
    const owner = await sync(org.owner.token, []);
    assert.equal(owner.statusCode, 200, owner.body);
  });
});
