/**
 * Organization API keys (/v1/org/api-keys): admins issue, list and revoke them with a full-access token; a key acts
 * for the organization (what it creates is a company asset, what it does is an organization audit row); personal and
 * organization key lists never show each other's keys; a revocation is refused at once by every process.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, type TestApp } from "../helpers/app.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

let t: TestApp;
let b: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgkeys.test" } });
  // a second API process over the same store, for revocations it must learn about
  b = await createTestApp({ databaseUrl: t.url, env: { APPS_DOMAIN: "apps.orgkeys.test" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
});
after(async () => {
  await b?.close();
  await t?.close();
});

const issue = (token: string, body: object, headers?: Record<string, string>) =>
  call(t.app, { method: "POST", url: "/v1/org/api-keys", token, body, headers });
const orgKeys = async (token: string) => {
  const res = await call(t.app, { url: "/v1/org/api-keys", token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().items as { id: string; prefix: string; scopes: string[]; issued_by: { email: string } }[];
};

describe("organization API keys", () => {
  test("admins and the owner issue keys; members get 403, outsiders 404, scoped keys 403 scope_insufficient", async () => {
    const res = await issue(org.admins[0].token, { name: "ci", scopes: ["org:*", "static:write", "static:write"] });
    assert.equal(res.statusCode, 201, res.body);
    const k = res.json();
    assert.match(k.key, /^opk_/);
    assert.equal(k.prefix, k.key.slice(0, 12));
    assert.deepEqual(k.scopes, ["org:*", "static:write"]);
    assert.deepEqual(k.issued_by, { id: org.admins[0].id, email: org.admins[0].email });
    assert.equal((await issue(org.owner.token, { name: "owner's", scopes: ["*"] })).statusCode, 201);

    expectError(await issue(org.members[0].token, { name: "x", scopes: ["org:read"] }), 403, "forbidden_role");
    expectError(await issue(org.outsider.token, { name: "x", scopes: ["org:read"] }), 404, "not_found");
    const personal = await scopedKey(t.app, org.owner.token, ["*"]);
    expectError(await issue(personal, { name: "x", scopes: ["org:read"] }), 403, "scope_insufficient");
    expectError(await issue(k.key, { name: "x", scopes: ["org:read"] }), 403, "scope_insufficient");
    expectError(await issue(org.admins[0].token, { name: "x", scopes: ["org:nope"] }), 400, "invalid_scope");
    const past = { name: "x", scopes: ["org:read"], expires_at: "2001-01-01T00:00:00Z" };
    expectError(await issue(org.admins[0].token, past), 400, "invalid_request");
  });

  test("the list shows every organization key with issuer, prefix, scopes and last use; personal lists stay apart", async () => {
    const admin = org.admins[0];
    const key = (await issue(admin.token, { name: "reader", scopes: ["org:read"] })).json();
    const mine = await scopedKey(t.app, admin.token, ["static:read"]);
    assert.equal((await call(t.app, { url: "/v1/org", token: key.key })).statusCode, 200);

    const listed = await orgKeys(org.owner.token);
    const row = listed.find((x) => x.id === key.id) as Record<string, unknown> | undefined;
    assert.ok(row, "the owner sees the admin's key");
    assert.deepEqual(row.issued_by, { id: admin.id, email: admin.email });
    assert.equal(row.prefix, key.key.slice(0, 12));
    assert.deepEqual(row.scopes, ["org:read"]);
    assert.ok(row.last_used_at, "last_used_at is set once the key was used");
    assert.ok(!("key" in row));

    const personalList = (await call(t.app, { url: "/v1/api-keys", token: admin.token })).json() as { id: string }[];
    assert.ok(personalList.length >= 1);
    assert.ok(!personalList.some((x) => listed.some((o) => o.id === x.id)), "no organization key in /v1/api-keys");
    assert.ok(!listed.some((x) => x.prefix === mine.slice(0, 12)), "no personal key in /v1/org/api-keys");
    // the personal routes do not work on organization keys, in either context
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/api-keys/${key.id}`, token: admin.token }),
      404,
      "not_found",
    );
    expectError(await call(t.app, { url: "/v1/api-keys", token: admin.token, headers: ORG }), 403, "forbidden_role");
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: admin.token,
        headers: ORG,
        body: { name: "sneaky", scopes: ["*"] },
      }),
      403,
      "forbidden_role",
    );
  });

  test("what a key creates is a company asset, and its requests are organization audit rows", async () => {
    const key = (await issue(org.admins[0].token, { name: "deployer", scopes: ["static:write"] })).json().key;
    const created = await call(t.app, { method: "POST", url: "/v1/static", token: key, body: { name: "by-key" } });
    assert.equal(created.statusCode, 201, created.body);
    const company = await call(t.app, { url: "/v1/static", token: org.members[0].token, headers: ORG });
    assert.ok(company.json().some((s: { name: string }) => s.name === "by-key"));
    const { rows } = await t.db.query(
      `SELECT owner_kind, owner_id, account_id, token_kind, resource_kind FROM audit_log WHERE action = 'createStaticSite'
        AND token_id = (SELECT id FROM tokens WHERE display_prefix = $1)`,
      [key.slice(0, 12)],
    );
    assert.deepEqual(rows, [
      {
        owner_kind: "org",
        owner_id: org.id,
        account_id: org.admins[0].id,
        token_kind: "scoped",
        resource_kind: "static",
      },
    ]);
    // a key acts for its organization only: asking for the personal context is refused
    expectError(
      await call(t.app, { url: "/v1/static", token: key, headers: { "x-owner": "me" } }),
      403,
      "forbidden_role",
    );
  });

  test("an admin revokes any organization key: refused at once here and by another process; members cannot", async () => {
    const key = (await issue(org.owner.token, { name: "short-lived", scopes: ["org:read"] })).json();
    assert.equal((await call(b.app, { url: "/v1/org", token: key.key })).statusCode, 200, "process B cached it");
    const del = (token: string, id: string) => call(t.app, { method: "DELETE", url: `/v1/org/api-keys/${id}`, token });
    expectError(await del(org.members[0].token, key.id), 403, "forbidden_role");
    expectError(await del(org.admins[0].token, randomUUID()), 404, "not_found");
    assert.equal((await del(org.admins[0].token, key.id)).statusCode, 204);
    expectError(await call(t.app, { url: "/v1/org", token: key.key }), 401, "auth_required");
    // process B's cache keeps a key 30 s; within 5 s is the broadcast (room for a loaded CI machine)
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await call(b.app, { url: "/v1/org", token: key.key })).statusCode;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 401);
    expectError(await del(org.admins[0].token, key.id), 404, "not_found");
    assert.ok(!(await orgKeys(org.admins[0].token)).some((x) => x.id === key.id));
    // another organization's key id is not found here
    const other = await makeOrg(t, { admins: 0, members: 0 });
    const theirs = (await issue(other.owner.token, { name: "theirs", scopes: ["org:read"] })).json();
    expectError(await del(org.admins[0].token, theirs.id), 404, "not_found");
    assert.equal((await call(t.app, { url: "/v1/org", token: theirs.key })).statusCode, 200);
  });

  test("a key acts with its issuer's current role: demoted to member, its admin routes answer 403", async () => {
    const admin = org.admins[0];
    const key = (await issue(admin.token, { name: "audit reader", scopes: ["org:read"] })).json().key;
    assert.equal((await call(t.app, { url: "/v1/org/audit", token: key })).statusCode, 200);
    await t.db.query("UPDATE org_members SET role = 'member' WHERE account_id = $1", [admin.id]);
    try {
      expectError(await call(t.app, { url: "/v1/org/audit", token: key }), 403, "forbidden_role");
    } finally {
      await t.db.query("UPDATE org_members SET role = 'admin' WHERE account_id = $1", [admin.id]);
    }
  });
});
