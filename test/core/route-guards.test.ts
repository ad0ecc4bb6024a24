/**
 * Who may call a route beyond its scope is declared on the route and enforced by the one authorizer
 * (http/authenticate.ts): the organization role (`orgRole`, the organizations area) and area guards (`guard`,
 * http/route-guard.ts). A declaration no listed area can enforce stops start-up; a route is covered whatever the
 * order its area is listed in.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Type } from "@sinclair/typebox";
import type { RouteOptions } from "fastify";
import { AREAS } from "../../src/areas.js";
import type { AreaModule } from "../../src/kernel/context.js";
import { route, type Route } from "../../src/http/route.js";
import type { AuthRule } from "../../src/http/auth-rule.js";
import { call, createTestApp, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";

const probeRoute = (url: string, extra: Partial<Route>): Route =>
  route({
    method: "GET",
    url,
    operationId: `probe${url.replace(/\W/g, "")}`,
    tags: ["probe"],
    summary: "A throw-away route proving the authorizer.",
    auth: { token: true },
    response: { 200: Type.Object({ ok: Type.Boolean() }) },
    handler: async () => ({ ok: true }),
    ...extra,
  });

/** A throw-away area with the given routes; listed first, it also records every route registered after it. */
function probeArea(routes: Route[], seen: RouteOptions[] = []): AreaModule {
  return {
    name: "probe",
    routes: (app) => {
      app.addHook("onRoute", (r) => void seen.push(r));
      return routes;
    },
  };
}

const ORG_ROLE = probeRoute("/v1/probe/org-role", { orgRole: "member" });
const PARTNER = probeRoute("/v1/probe/partner", { auth: { scope: "partner:read" }, guard: "partnerAccount" });

describe("start-up refuses a declaration no listed area enforces", () => {
  test("orgRole without the organizations area", async () => {
    const areas = [probeArea([ORG_ROLE]), ...AREAS.filter((a) => a.name !== "orgs" && !a.name.startsWith("orgs-"))];
    await assert.rejects(
      createTestApp({ areas }),
      /route GET \/v1\/probe\/org-role declares orgRole, but no organizations area is listed/,
    );
  });

  test("a guard without the area that provides it (partnerAccount without partners)", async () => {
    const areas = [probeArea([PARTNER]), ...AREAS.filter((a) => a.name !== "partner")];
    await assert.rejects(
      createTestApp({ areas }),
      /route GET \/v1\/probe\/partner declares the guard partnerAccount, but no listed area provides it/,
    );
  });
});

describe("routes of an area listed before the enforcing ones", () => {
  let t: TestApp;
  const seen: RouteOptions[] = [];

  before(async () => {
    t = await createTestApp({ areas: [probeArea([ORG_ROLE, PARTNER], seen), ...AREAS] });
  });
  after(async () => {
    await t?.close();
  });

  test("orgRole: a caller outside any organization gets 404, a member passes", async () => {
    const outsider = await signup(t.app);
    expectError(await call(t.app, { url: "/v1/probe/org-role", token: outsider.token }), 404, "not_found");
    const owner = await signup(t.app);
    const org = await call(t.app, { method: "POST", url: "/v1/org", token: owner.token, body: { name: "Probe Co" } });
    assert.equal(org.statusCode, 201, org.body);
    const res = await call(t.app, { url: "/v1/probe/org-role", token: owner.token });
    assert.equal(res.statusCode, 200, res.body);
  });

  test("partnerAccount: another account gets 403 partner_required, the partner passes", async () => {
    const someone = await signup(t.app);
    const refused = await call(t.app, { url: "/v1/probe/partner", token: someone.token });
    expectError(refused, 403, "partner_required");
    assert.match(refused.json().error.message, /This account is not a partner/);
    const made = await call(t.app, {
      method: "PUT",
      url: `/v1/operator/partners/${someone.id}`,
      token: OPERATOR_TOKEN,
      body: {},
    });
    assert.equal(made.statusCode, 200, made.body);
    const key = await scopedKey(t.app, someone.token, ["partner:read"]);
    const res = await call(t.app, { url: "/v1/probe/partner", token: key });
    assert.equal(res.statusCode, 200, res.body);
  });

  test("every /v1/partner route names partnerAccount, every billing-scoped route orgWalletAdmins", () => {
    const scoped = (r: RouteOptions) => {
      const auth = r.config?.auth as AuthRule | undefined;
      return auth && "scope" in auth ? auth.scope : null;
    };
    const partner = seen.filter((r) => /^\/v1\/partner(\/|$)/.test(r.url) && scoped(r));
    const billing = seen.filter((r) => scoped(r)?.startsWith("billing:"));
    assert.ok(partner.length >= 20 && billing.length >= 15, `${partner.length} partner, ${billing.length} billing`);
    for (const r of partner) assert.equal(r.config?.guard, "partnerAccount", `${r.method} ${r.url}`);
    for (const r of billing) assert.equal(r.config?.guard, "orgWalletAdmins", `${r.method} ${r.url}`);
  });
});
