/**
 * The organization audit log (GET /v1/org/audit, admin): every row owned by the organization (members in the
 * company context, organization keys, /v1/org changes), never members' personal activity or other owners'; filters
 * by actor (id or e-mail), action, resource kind and time range; keyset pages on id. resource_kind is filled for
 * every audited request from the route (its scope resource, else its first tag).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgaudit.test" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
});
after(async () => t?.close());

interface Item {
  id: string;
  actor: { id: string; email: string };
  token_kind: string;
  action: string;
  resource_kind: string | null;
  target: string | null;
  status: number;
  ip: string;
  request_id: string;
  created_at: string;
}

const audit = async (query = "", token = org.admins[0].token) => {
  const res = await call(t.app, { url: `/v1/org/audit${query}`, token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { items: Item[]; next_cursor: string | null };
};

describe("organization audit log", () => {
  test("company-context requests, organization keys and /v1/org changes are listed; personal activity is not", async () => {
    const member = org.members[0];
    const created = await call(t.app, {
      method: "POST",
      url: "/v1/static",
      token: member.token,
      headers: ORG,
      body: { name: "audited-site" },
    });
    assert.equal(created.statusCode, 201, created.body);
    const personal = await call(t.app, {
      method: "POST",
      url: "/v1/static",
      token: member.token,
      body: { name: "personal-site" },
    });
    assert.equal(personal.statusCode, 201);
    await call(t.app, { method: "PATCH", url: "/v1/me", token: member.token, body: { display_name: "M" } });
    const patched = await call(t.app, {
      method: "PATCH",
      url: "/v1/org",
      token: org.admins[0].token,
      body: { shared_approval: true },
    });
    assert.equal(patched.statusCode, 200);
    const key = (
      await call(t.app, {
        method: "POST",
        url: "/v1/org/api-keys",
        token: org.owner.token,
        body: { name: "k", scopes: ["static:write"] },
      })
    ).json().key;
    const byKey = await call(t.app, { method: "POST", url: "/v1/static", token: key, body: { name: "key-site" } });
    assert.equal(byKey.statusCode, 201);
    const refused = await call(t.app, {
      method: "POST",
      url: "/v1/static",
      token: member.token,
      headers: ORG,
      body: { name: "x" },
    });
    assert.equal(refused.statusCode, 400);
    // other owners' rows: an outsider's own activity
    await call(t.app, { method: "POST", url: "/v1/static", token: org.outsider.token, body: { name: "outside" } });

    const { items } = await audit();
    const summary = items.map((i) => [i.actor.email, i.action, i.resource_kind, i.status, i.token_kind]);
    assert.deepEqual(summary, [
      [member.email, "createStaticSite", "static", 400, "full"],
      [org.owner.email, "createStaticSite", "static", 201, "scoped"],
      [org.owner.email, "createOrgApiKey", "org", 201, "full"],
      [org.admins[0].email, "updateOrg", "org", 200, "full"],
      [member.email, "createStaticSite", "static", 201, "full"],
    ]);
    const first = items[items.length - 1];
    assert.deepEqual(first.actor, { id: member.id, email: member.email });
    assert.equal(first.target, null);
    assert.ok(first.request_id && first.ip && !Number.isNaN(Date.parse(first.created_at)));
    // personal rows carry their kind too (the route's scope resource, else its tag)
    const { rows } = await t.db.query<{ action: string; resource_kind: string }>(
      "SELECT action, resource_kind FROM audit_log WHERE account_id = $1 AND owner_kind = 'account' ORDER BY id",
      [member.id],
    );
    assert.deepEqual(rows, [
      { action: "createStaticSite", resource_kind: "static" },
      { action: "updateMe", resource_kind: "account" },
    ]);
  });

  test("admins and the owner read it; members get 403, outsiders 404, keys without org:read 403", async () => {
    assert.equal((await call(t.app, { url: "/v1/org/audit", token: org.owner.token })).statusCode, 200);
    expectError(await call(t.app, { url: "/v1/org/audit", token: org.members[0].token }), 403, "forbidden_role");
    expectError(await call(t.app, { url: "/v1/org/audit", token: org.outsider.token }), 404, "not_found");
    const key = (
      await call(t.app, {
        method: "POST",
        url: "/v1/org/api-keys",
        token: org.owner.token,
        body: { name: "k", scopes: ["static:read"] },
      })
    ).json().key;
    expectError(await call(t.app, { url: "/v1/org/audit", token: key }), 403, "scope_insufficient");
  });

  test("filters: actor by id or e-mail, action, resource kind; pages follow the cursor", async () => {
    const member = org.members[0];
    for (const q of [`?actor=${member.id}`, `?actor=${encodeURIComponent(member.email.toUpperCase())}`]) {
      const { items } = await audit(q);
      assert.ok(items.length >= 2);
      assert.ok(items.every((i) => i.actor.id === member.id));
    }
    assert.deepEqual((await audit("?actor=nobody@example.com")).items, []);
    const byAction = (await audit("?action=updateOrg")).items;
    assert.ok(byAction.length >= 1 && byAction.every((i) => i.action === "updateOrg"));
    const byKind = (await audit("?resource_kind=org")).items;
    assert.ok(byKind.length >= 2 && byKind.every((i) => i.resource_kind === "org"));
    const combined = (await audit(`?resource_kind=static&actor=${member.id}&action=createStaticSite`)).items;
    assert.deepEqual(
      combined.map((i) => i.status),
      [400, 201],
    );

    const all = (await audit("?limit=200")).items;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Item[]; next_cursor: string | null } = await audit(
        `?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      assert.ok(page.items.length <= 2);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      all.map((i) => i.id),
    );
    expectError(await call(t.app, { url: "/v1/org/audit?cursor=abc", token: org.owner.token }), 400, "invalid_request");
    expectError(await call(t.app, { url: "/v1/org/audit?limit=201", token: org.owner.token }), 400, "invalid_request");
    expectError(
      await call(t.app, { url: "/v1/org/audit?from=yesterday", token: org.owner.token }),
      400,
      "invalid_request",
    );
  });

  test("a from/to range is exact, wherever it lies and even where ids and times disagree by minutes", async () => {
    const other = await makeOrg(t, { admins: 0, members: 0 });
    const base = Date.parse("2024-03-01T00:00:00Z");
    // one row a minute for 10 hours, except that every 7th row's time is 20 minutes early (a long transaction)
    const times = Array.from({ length: 600 }, (_, i) => base + i * 60_000 - (i % 7 === 0 ? 20 * 60_000 : 0));
    await t.db.query(
      `INSERT INTO audit_log (account_id, owner_kind, owner_id, token_kind, action, resource_kind, status, created_at)
       SELECT $1, 'org', $2, 'full', 'act' || (i % 3), 'static', 200, to_timestamp(t / 1000.0)
         FROM unnest($3::bigint[]) WITH ORDINALITY AS u(t, i) ORDER BY i`,
      [other.owner.id, other.id, times],
    );
    const get = async (query: string) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call(t.app, {
          url: `/v1/org/audit?limit=200${query}${cursor ? `&cursor=${cursor}` : ""}`,
          token: other.owner.token,
        });
        assert.equal(res.statusCode, 200, res.body);
        ids.push(...res.json().items.map((i: Item) => i.created_at));
        cursor = res.json().next_cursor;
      } while (cursor);
      return ids.map((c) => Date.parse(c)).sort((a, b) => a - b);
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [from, to] of [
      [base + 60 * 60_000, base + 120 * 60_000],
      [base + 30 * 60_000, base + 31 * 60_000],
      [base + 500 * 60_000, null],
      [null, base + 10 * 60_000],
      [base - 3600_000, base + 3 * 3600_000],
    ] as [number | null, number | null][]) {
      const expected = times
        .filter((x) => (from === null || x >= from) && (to === null || x < to))
        .sort((a, b) => a - b);
      const q = `${from !== null ? `&from=${iso(from)}` : ""}${to !== null ? `&to=${iso(to)}` : ""}`;
      assert.deepEqual(await get(q), expected, q);
    }
    const withAction = await get(`&action=act1&from=${iso(base + 100 * 60_000)}&to=${iso(base + 200 * 60_000)}`);
    assert.equal(
      withAction.length,
      times.filter((x, i) => (i + 1) % 3 === 1 && x >= base + 6e6 && x < base + 1.2e7).length,
    );
    expectError(
      await call(t.app, {
        url: `/v1/org/audit?from=${iso(base)}&to=${iso(base)}`,
        token: other.owner.token,
      }),
      400,
      "invalid_request",
    );
  });
});
