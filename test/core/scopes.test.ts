import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { coverage, parseScope, type Grant } from "../../src/auth/scopes.js";
import type { RouteEntry } from "../../src/http/route-table.js";
import { call, createTestApp, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";

const grants = (...s: string[]) => s.map((x) => parseScope(x)!) as Grant[];
const concretePath = (url: string) => url.replace(/:(\w+)/g, () => randomUUID());

describe("scope grammar and evaluator", () => {
  test("valid scopes parse and unknown or malformed ones are rejected", () => {
    for (const ok of [
      "*",
      "databases:read",
      "databases:write",
      "databases:*",
      "billing:read",
      "linked-apps:write",
      "org:*",
      "databases:write:my-db",
      "static:write:site-1",
      `pods:read:${randomUUID()}`,
    ]) {
      assert.ok(parseScope(ok), ok);
    }
    for (const bad of [
      "",
      "databases",
      "databases:delete",
      "nosuch:read",
      "billing:read:x",
      "partner:write:abc",
      "databases:write:bad slug",
      "databases:read:x:y",
      "*:read",
    ]) {
      assert.equal(parseScope(bad), null, bad);
    }
  });

  test("write includes read, resource:* and * include both, read does not include write", () => {
    assert.equal(coverage(grants("databases:write"), "databases", "read").kind, "all");
    assert.equal(coverage(grants("databases:*"), "databases", "write").kind, "all");
    assert.equal(coverage(grants("*"), "billing", "write").kind, "all");
    assert.equal(coverage(grants("databases:read"), "databases", "write").kind, "none");
    assert.equal(coverage(grants("billing:write"), "databases", "read").kind, "none");
  });

  test("instance-limited grants cover only their instances", () => {
    assert.deepEqual(coverage(grants("databases:write:a", "databases:read:b"), "databases", "read"), {
      kind: "instances",
      refs: ["a", "b"],
    });
    assert.deepEqual(coverage(grants("databases:write:a", "databases:read:b"), "databases", "write"), {
      kind: "instances",
      refs: ["a"],
    });
    assert.equal(coverage(grants("databases:write:a", "databases:read"), "databases", "read").kind, "all");
  });

  test("pod scopes never cover builds", () => {
    assert.equal(coverage(grants("pods:*"), "builds", "write").kind, "none");
    assert.equal(coverage(grants("pods:*", "builds:write"), "builds", "write").kind, "all");
  });
});

describe("auth declarations over the whole route table", () => {
  let t: TestApp;
  let routes: RouteEntry[];
  let user: { token: string };
  let everythingKey: string;
  before(async () => {
    t = await createTestApp();
    routes = (t.app as unknown as { routeTable: RouteEntry[] }).routeTable;
    user = await signup(t.app);
    everythingKey = await scopedKey(t.app, user.token, ["*"]);
  });
  after(async () => {
    await t.close();
  });

  test("every route has an auth declaration and the table holds the core endpoints", () => {
    assert.ok(routes.length >= 20);
    for (const r of routes)
      assert.ok((r.auth && Object.keys(r.auth).length === 1) || "scope" in r.auth, `${r.method} ${r.url}`);
    const names = new Set(routes.map((r) => `${r.method} ${r.url}`));
    for (const must of [
      "GET /v1/me",
      "POST /v1/api-keys",
      "DELETE /v1/api-keys/:id",
      "GET /v1/edition",
      "GET /v1/openapi.json",
      "POST /v1/cli/errors",
    ]) {
      assert.ok(names.has(must), must);
    }
  });

  test("a route registered without a declaration stops the app from starting", async () => {
    await assert.rejects(
      createTestApp({ extend: (app) => app.get("/v1/undeclared", async () => "x") }),
      /no auth declaration/,
    );
  });

  test("every non-public route refuses a request without a token with 401 auth_required", async () => {
    for (const r of routes.filter((x) => !("public" in x.auth))) {
      const res = await call(t.app, {
        method: r.method as never,
        url: concretePath(r.url),
        body: r.method === "GET" ? undefined : {},
      });
      expectError(res, 401, "auth_required");
    }
  });

  test("account endpoints refuse a scoped key, even one with scope *, with 403 scope_insufficient", async () => {
    const accountRoutes = routes.filter((x) => "account" in x.auth);
    assert.ok(accountRoutes.length >= 10);
    for (const r of accountRoutes) {
      const res = await call(t.app, {
        method: r.method as never,
        url: concretePath(r.url),
        token: everythingKey,
        body: r.method === "GET" ? undefined : {},
      });
      expectError(res, 403, "scope_insufficient");
    }
  });

  test("operator and fleet endpoints refuse user tokens; operator token is not a fleet token", async () => {
    for (const r of routes.filter((x) => "operator" in x.auth || "fleet" in x.auth)) {
      for (const token of [user.token, everythingKey]) {
        expectError(
          await call(t.app, {
            method: r.method as never,
            url: concretePath(r.url),
            token,
            body: r.method === "GET" ? undefined : {},
          }),
          401,
          "auth_required",
        );
      }
    }
    expectError(
      await call(t.app, { method: "POST", url: "/v1/fleet/patch-report", token: OPERATOR_TOKEN, body: { host: "h1" } }),
      401,
      "auth_required",
    );
  });

  test("scope routes refuse a key lacking the scope with 403 naming the scope, and GET routes admit a key holding it", async () => {
    const unrelated = await scopedKey(t.app, user.token, ["partner:read"]);
    for (const r of routes.filter((x) => "scope" in x.auth && !x.auth.scope.startsWith("partner:"))) {
      const scope = (r.auth as { scope: string }).scope;
      const res = await call(t.app, {
        method: r.method as never,
        url: concretePath(r.url),
        token: unrelated,
        body: r.method === "GET" ? undefined : {},
      });
      expectError(res, 403, "scope_insufficient");
      assert.ok(res.json().error.message.includes(scope), `${r.url}: ${res.json().error.message}`);
      // a streaming route's answer never ends (inject would wait for it), marked `streams` on its declaration: the
      // event stream's admission is tested in test/events
      if (r.method === "GET" && !r.streams) {
        const key = await scopedKey(t.app, user.token, [scope]);
        const ok = await call(t.app, { url: concretePath(r.url), token: key });
        assert.ok(ok.statusCode !== 401 && ok.statusCode !== 403, `${r.url} with ${scope}: ${ok.statusCode}`);
      }
    }
  });

  test("partner routes: 403 partner_required for other accounts, 403 for child keys, partner:read cannot write", async () => {
    const partnerRoutes = routes.filter((x) => "scope" in x.auth && x.auth.scope.startsWith("partner:"));
    assert.ok(partnerRoutes.length >= 10);
    const partner = await signup(t.app);
    const made = await call(t.app, {
      method: "PUT",
      url: `/v1/operator/partners/${partner.id}`,
      token: OPERATOR_TOKEN,
      body: {},
    });
    assert.equal(made.statusCode, 200, made.body);
    const readKey = await scopedKey(t.app, partner.token, ["partner:read"]);
    const issued = await call(t.app, {
      method: "POST",
      url: "/v1/partner/users",
      token: partner.token,
      body: { external_ref: "matrix-child", token: { scopes: ["pods:*"] } },
    });
    assert.equal(issued.statusCode, 201, issued.body);
    const childKey: string = issued.json().token.key;
    for (const r of partnerRoutes) {
      const scope = (r.auth as { scope: string }).scope;
      const req = (token: string) =>
        call(t.app, {
          method: r.method as never,
          url: concretePath(r.url),
          token,
          body: r.method === "GET" ? undefined : {},
        });
      for (const token of [user.token, everythingKey]) expectError(await req(token), 403, "partner_required");
      expectError(await req(childKey), 403, "scope_insufficient");
      if (scope === "partner:write") expectError(await req(readKey), 403, "scope_insufficient");
      else {
        const ok = await req(readKey);
        assert.ok(ok.statusCode !== 401 && ok.statusCode !== 403, `${r.url} with partner:read: ${ok.statusCode}`);
      }
    }
  });

  test("token endpoints admit any valid token, scoped or full", async () => {
    const narrow = await scopedKey(t.app, user.token, ["billing:read"]);
    for (const r of routes.filter((x) => "token" in x.auth && x.method === "GET")) {
      for (const token of [user.token, narrow]) {
        assert.equal((await call(t.app, { url: concretePath(r.url), token })).statusCode, 200, r.url);
      }
    }
  });

  test("key issuance rejects unknown scope strings with 400", async () => {
    for (const scopes of [["databases:delete"], ["nosuch:read"], ["billing:read:abc"], []]) {
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: user.token,
        body: { name: "k", scopes },
      });
      assert.equal(res.statusCode, 400, JSON.stringify(scopes));
    }
  });
});
