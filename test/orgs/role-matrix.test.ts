/**
 * Role × route matrix, generated from the route table (like the scope matrix in test/core/scopes.test.ts), so every
 * /v1/org route any area adds later is covered without being listed here. For each route declaring `orgRole`, in a
 * fresh organization: an outsider gets 404 not_found; a member below the role 403 forbidden_role; a personal key
 * lacking org scopes 403 scope_insufficient; any scoped key (a personal `*` key, an organization `*` key) on an
 * account row 403 scope_insufficient; an organization key on a scope row acts as an admin (keys are capped there);
 * and callers at or above the role never get the guard's 403 or 404 (the body `{}` and random ids may still give
 * 400, 404 or 409 from the route itself). The bulk member routes (JSON sync, CSV, implicit deletion) are held to the
 * rule of the single-member routes item by item: an admin's escalation is the item's error forbidden_role, with the
 * single route's message, and the owner's goes through.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { RouteEntry } from "../../src/http/route-table.js";
import { roleAtLeast, type OrgRole } from "../../src/orgs/contract.js";
import { call, createTestApp, expectError, scopedKey, type TestApp } from "../helpers/app.js";
import { makeOrg, type Person, type TestOrg } from "./lib.js";

/** /v1/org routes a non-member calls: the public invitation preview, creating an organization, accepting an invite */
const NO_ROLE = new Set(["GET /v1/org/invites/preview", "POST /v1/org", "POST /v1/org/invites/accept"]);
/** what the guard says (src/orgs/guard.ts), to tell its refusals from the route's own 403/404 */
const GUARD_NOT_MEMBER = "The caller is not a member of an organization.";
const GUARD_ROLE = /^This needs the organization role/;

let t: TestApp;
let routes: RouteEntry[];
before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgmatrix.test" } });
  routes = (t.app as unknown as { routeTable: RouteEntry[] }).routeTable.filter(
    (r) => r.url === "/v1/org" || r.url.startsWith("/v1/org/"),
  );
});
after(async () => t?.close());

const name = (r: RouteEntry) => `${r.method} ${r.url}`;
const concretePath = (url: string) => url.replace(/:(\w+)/g, () => randomUUID());
const send = (r: RouteEntry, token: string) =>
  call(t.app, {
    method: r.method as never,
    url: concretePath(r.url),
    token,
    body: r.method === "GET" ? undefined : {},
  });

/** The caller got past the guard: whatever the route answers, it is not the guard's refusal (nor a crash). */
function passedGuard(res: Awaited<ReturnType<typeof send>>, where: string) {
  const error = res.statusCode >= 400 ? res.json().error : null;
  assert.ok(res.statusCode !== 401, `${where}: ${res.body}`);
  assert.ok(!(res.statusCode === 404 && error?.message === GUARD_NOT_MEMBER), `${where}: the guard said 404`);
  assert.ok(!(error?.code === "forbidden_role" && GUARD_ROLE.test(error.message)), `${where}: ${res.body}`);
  assert.ok(error?.code !== "internal", `${where}: ${res.body}`);
}

async function orgKey(org: TestOrg, scopes: string[]): Promise<string> {
  const res = await call(t.app, {
    method: "POST",
    url: "/v1/org/api-keys",
    token: org.owner.token,
    body: { name: "matrix", scopes },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key;
}

describe("organization role × route matrix", () => {
  test("every /v1/org route declares an orgRole, except those a non-member calls", () => {
    assert.ok(routes.length >= 10, `${routes.length} /v1/org routes`);
    for (const r of routes) {
      if (NO_ROLE.has(name(r))) assert.equal(r.orgRole, null, `${name(r)} is called by non-members`);
      else assert.ok(r.orgRole, `${name(r)} declares no orgRole`);
    }
  });

  test("outsiders 404, lower roles 403 forbidden_role, keys by their scopes, equal and higher roles past the guard", async () => {
    const checked: string[] = [];
    const one = async (r: RouteEntry) => {
      const needed = r.orgRole as OrgRole;
      const where = (who: string) => `${name(r)} (${needed}) as ${who}`;
      // a fresh organization per route: what one route's call changes never decides another's answer
      const org = await makeOrg(t, { admins: 1, members: 1 });
      const scope = "scope" in r.auth ? r.auth.scope : null;
      const unrelated = await scopedKey(t.app, org.owner.token, [
        scope?.startsWith("partner:") ? "pods:read" : "partner:read",
      ]);
      const personalAll = await scopedKey(t.app, org.owner.token, ["*"]);
      const companyAll = await orgKey(org, ["*"]);

      // refusals first, so nothing has changed yet
      expectError(await send(r, org.outsider.token), 404, "not_found");
      expectError(await send(r, unrelated), 403, "scope_insufficient");
      if ("account" in r.auth) {
        expectError(await send(r, personalAll), 403, "scope_insufficient");
        expectError(await send(r, companyAll), 403, "scope_insufficient");
      }
      const people: [OrgRole, string][] = [
        ["member", org.members[0].token],
        ["admin", org.admins[0].token],
        ["owner", org.owner.token],
      ];
      for (const [role, token] of people) {
        if (roleAtLeast(role, needed)) continue;
        const res = await send(r, token);
        expectError(res, 403, "forbidden_role");
        assert.match(res.json().error.message, GUARD_ROLE, where(role));
      }
      // an organization key on a scope row acts with its issuer's role, at most admin
      if (scope !== null) {
        const res = await send(r, companyAll);
        if (roleAtLeast("admin", needed)) passedGuard(res, where("organization key"));
        else expectError(res, 403, "forbidden_role");
      }
      // then the callers the route admits, lowest role first
      for (const [role, token] of people) if (roleAtLeast(role, needed)) passedGuard(await send(r, token), where(role));
      checked.push(name(r));
    };
    // routes are independent (an organization each): a few at a time
    const queue = routes.filter((x) => x.orgRole);
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let r = queue.shift(); r; r = queue.shift()) await one(r);
      }),
    );
    for (const must of ["GET /v1/org", "PATCH /v1/org", "DELETE /v1/org", "GET /v1/org/audit", "POST /v1/org/api-keys"])
      assert.ok(checked.includes(must), must);
  });
});

describe("bulk member routes under the single-member rules", () => {
  type Role = "admin" | "member";
  /** one role change through the JSON sync or the CSV upload */
  const bulk: Record<string, (token: string, who: Person, role: Role) => ReturnType<typeof call>> = {
    sync: (token, who, role) =>
      call(t.app, {
        method: "POST",
        url: "/v1/org/members/sync",
        token,
        body: { members: [{ email: who.email, role }], implicit_deletion: false },
      }),
    csv: (token, who, role) =>
      call(t.app, {
        method: "POST",
        url: "/v1/org/members/csv",
        token,
        headers: { "content-type": "text/csv" },
        body: `email,department_code,role\n${who.email},,${role}\n`,
      }),
  };
  const itemOf = (res: Awaited<ReturnType<typeof call>>, who: Person) => {
    assert.equal(res.statusCode, 200, res.body);
    return res.json().items.find((i: { email: string }) => i.email === who.email);
  };
  const roleOf = async (org: TestOrg, who: Person) => {
    const res = await call(t.app, { url: "/v1/org/members", token: org.owner.token });
    return res.json().items.find((m: { id: string }) => m.id === who.id)?.role ?? null;
  };
  /** the single route's refusal, whose message the bulk item repeats */
  const patchRefusal = async (org: TestOrg, token: string, who: Person, role: Role) => {
    const res = await call(t.app, { method: "PATCH", url: `/v1/org/members/${who.id}`, token, body: { role } });
    expectError(res, 403, "forbidden_role");
    return res.json().error.message as string;
  };

  for (const [way, send] of Object.entries(bulk))
    test(`${way}: an admin neither grants nor revokes admin (forbidden_role per item); the owner does`, async () => {
      const org = await makeOrg(t, { admins: 2, members: 1 });
      const [admin, otherAdmin] = org.admins;
      const [member] = org.members;

      const grant = itemOf(await send(admin.token, member, "admin"), member);
      assert.deepEqual([grant.result, grant.error], ["error", "forbidden_role"], JSON.stringify(grant));
      assert.equal(grant.message, await patchRefusal(org, admin.token, member, "admin"));
      assert.equal(await roleOf(org, member), "member");

      const revoke = itemOf(await send(admin.token, otherAdmin, "member"), otherAdmin);
      assert.deepEqual([revoke.result, revoke.error], ["error", "forbidden_role"], JSON.stringify(revoke));
      assert.equal(revoke.message, await patchRefusal(org, admin.token, otherAdmin, "member"));
      assert.equal(await roleOf(org, otherAdmin), "admin");

      assert.equal(itemOf(await send(org.owner.token, member, "admin"), member).result, "update");
      assert.equal(await roleOf(org, member), "admin");
      assert.equal(itemOf(await send(org.owner.token, otherAdmin, "member"), otherAdmin).result, "update");
      assert.equal(await roleOf(org, otherAdmin), "member");
      // the demoted admin's principal reloads at once, as after PATCH
      expectError(await call(t.app, { url: "/v1/org/invites", token: otherAdmin.token }), 403, "forbidden_role");
    });

  test("implicit deletion: an admin's sync does not remove another admin (forbidden_role); the owner's does", async () => {
    const org = await makeOrg(t, { admins: 2, members: 1 });
    const [admin, otherAdmin] = org.admins;
    const listed = [org.owner, admin, ...org.members].map((p) => ({ email: p.email }));
    const sync = (token: string) =>
      call(t.app, {
        method: "POST",
        url: "/v1/org/members/sync",
        token,
        body: { members: listed, implicit_deletion: true },
      });

    const refused = itemOf(await sync(admin.token), otherAdmin);
    assert.deepEqual([refused.result, refused.error], ["error", "forbidden_role"], JSON.stringify(refused));
    const single = await call(t.app, { method: "DELETE", url: `/v1/org/members/${otherAdmin.id}`, token: admin.token });
    expectError(single, 403, "forbidden_role");
    assert.equal(refused.message, single.json().error.message);
    assert.equal(await roleOf(org, otherAdmin), "admin");

    assert.equal(itemOf(await sync(org.owner.token), otherAdmin).result, "delete");
    assert.equal(await roleOf(org, otherAdmin), null);
    expectError(await call(t.app, { url: "/v1/org", token: otherAdmin.token }), 404, "not_found");
  });
});

/**
 * The company context (X-Owner: org, or an organization key) on every other authenticated route: the same one
 * authorizer decides before any route's own code. Someone in no organization asking for it is 403 forbidden_role; an
 * organization key asking to act as a person is 403 forbidden_role; on every list, each role and the organization
 * key read the company's resources (200), so no list refuses a member the company context.
 */
describe("company context × route matrix", () => {
  const NOT_MEMBER = /^The account is not a member of an organization/;
  const KEY_AS_PERSON = /^An organization API key acts for its organization only/;
  const authenticated = () =>
    (t.app as unknown as { routeTable: RouteEntry[] }).routeTable.filter(
      (r) =>
        !(r.url === "/v1/org" || r.url.startsWith("/v1/org/")) &&
        !("public" in r.auth || "operator" in r.auth || "fleet" in r.auth),
    );
  const as = (r: RouteEntry, token: string, owner: "me" | "org") =>
    call(t.app, {
      method: r.method as never,
      url: concretePath(r.url),
      token,
      headers: { "x-owner": owner },
      body: r.method === "GET" ? undefined : {},
    });

  test("outsiders and organization keys acting as persons are refused on every route; every role reads every list", async () => {
    const org = await makeOrg(t, { admins: 1, members: 1 });
    const companyAll = await orgKey(org, ["*"]);
    const routesChecked = authenticated();
    assert.ok(routesChecked.length >= 100, `${routesChecked.length} routes`);
    let lists = 0;
    for (const r of routesChecked) {
      const outsider = await as(r, org.outsider.token, "org");
      expectError(outsider, 403, "forbidden_role");
      assert.match(outsider.json().error.message, NOT_MEMBER, name(r));
      const keyAsPerson = await as(r, companyAll, "me");
      expectError(keyAsPerson, 403, "forbidden_role");
      assert.match(keyAsPerson.json().error.message, KEY_AS_PERSON, name(r));
      if (r.method !== "GET" || !("scope" in r.auth) || r.auth.instance !== "list" || r.url.includes(":")) continue;
      lists++;
      for (const [who, token] of [
        ["member", org.members[0].token],
        ["admin", org.admins[0].token],
        ["owner", org.owner.token],
        ["organization key", companyAll],
      ]) {
        // 503: the area's component (podman, the registry) is not running in this test app, which is no refusal
        const res = await as(r, token, "org");
        const ok = res.statusCode === 200 || (res.statusCode === 503 && /_unavailable$/.test(res.json().error.code));
        assert.ok(ok, `${name(r)} as ${who} in the company context: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    assert.ok(lists >= 10, `${lists} lists`);
  });
});
