import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { RouteEntry } from "../../src/http/route-table.js";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { accountCalls, PASSWORD } from "./account-helpers.js";

/** GET/PATCH /v1/me, the spend caps, and the rule that account endpoints take full-access tokens only. */
describe("account: profile and spend caps", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });
  const { login, me, tokenId } = accountCalls(() => t);

  describe("GET/PATCH /v1/me", () => {
    test("GET /v1/me returns the caller's account with defaults", async () => {
      const u = await signup(t.app);
      const res = await me(u.token);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.id, u.id);
      assert.equal(body.email, u.email);
      assert.equal(body.display_name, null);
      assert.equal(body.locale, "en");
      assert.equal(body.has_password, true);
      assert.ok(!Number.isNaN(Date.parse(body.created_at)));
      assert.ok(!("password_hash" in body), "the password hash never leaves the server");
    });

    test("GET /v1/me without a token or with a bad one is 401 auth_required", async () => {
      expectError(await call(t.app, { url: "/v1/me" }), 401, "auth_required");
      expectError(await me("op_u_notarealtoken"), 401, "auth_required");
    });

    test("PATCH /v1/me changes display_name and locale, and the change persists", async () => {
      const u = await signup(t.app);
      const res = await call(t.app, {
        method: "PATCH",
        url: "/v1/me",
        token: u.token,
        body: { display_name: "Kim Minji", locale: "ko" },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().display_name, "Kim Minji");
      assert.equal(res.json().locale, "ko");
      const again = (await me(u.token)).json();
      assert.equal(again.display_name, "Kim Minji");
      assert.equal(again.locale, "ko");

      // one field at a time leaves the other alone
      const back = await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { locale: "en" } });
      assert.equal(back.statusCode, 200, back.body);
      assert.equal(back.json().locale, "en");
      assert.equal(back.json().display_name, "Kim Minji");

      // null clears the display name
      const cleared = await call(t.app, {
        method: "PATCH",
        url: "/v1/me",
        token: u.token,
        body: { display_name: null },
      });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal((await me(u.token)).json().display_name, null);
    });

    test("PATCH /v1/me with a locale other than ko|en is 400 invalid_request naming the field", async () => {
      const u = await signup(t.app);
      for (const locale of ["fr", "KO", "", 1]) {
        const res = await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { locale } });
        expectError(res, 400, "invalid_request");
        assert.match(res.json().error.message, /locale/, `message names the field: ${res.body}`);
      }
      assert.equal((await me(u.token)).json().locale, "en");
    });

    test("PATCH /v1/me rejects unknown fields with 400 naming them (no mass assignment)", async () => {
      const u = await signup(t.app);
      for (const [field, value] of [
        ["email", "evil@example.com"],
        ["id", randomUUID()],
        ["has_password", false],
        ["account_spend_cap_krw", 1],
      ] as const) {
        const res = await call(t.app, {
          method: "PATCH",
          url: "/v1/me",
          token: u.token,
          body: { display_name: "x", [field]: value },
        });
        expectError(res, 400, "invalid_request");
        assert.match(res.json().error.message, new RegExp(field), res.body);
      }
      const after = (await me(u.token)).json();
      assert.equal(after.email, u.email);
      assert.equal(after.id, u.id);
      assert.equal(after.display_name, null, "a refused request changes nothing");
    });

    test("PATCH /v1/me with an empty body, a non-string or too long display_name is 400", async () => {
      const u = await signup(t.app);
      expectError(
        await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: {} }),
        400,
        "invalid_request",
      );
      for (const display_name of [42, "", "x".repeat(101)]) {
        const res = await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { display_name } });
        expectError(res, 400, "invalid_request");
        assert.match(res.json().error.message, /display_name/, res.body);
      }
      expectError(
        await call(t.app, {
          method: "PATCH",
          url: "/v1/me",
          token: u.token,
          body: "{not json",
          headers: { "content-type": "application/json" },
        }),
        400,
        "bad_json",
      );
    });
  });

  describe("spend caps", () => {
    for (const [path, field] of [
      ["/v1/me/account-spend-cap", "account_spend_cap_krw"],
      ["/v1/me/app-spend-cap", "app_spend_cap_krw"],
    ] as const) {
      const other = field === "account_spend_cap_krw" ? "app_spend_cap_krw" : "account_spend_cap_krw";
      const isDefault = field.replace(/_krw$/, "_is_default");

      test(`PUT ${path} stores the cap, returns it, and GET /v1/me shows it`, async () => {
        const u = await signup(t.app);
        const before = (await me(u.token)).json();
        const res = await call(t.app, { method: "PUT", url: path, token: u.token, body: { amount_krw: 250_000 } });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json()[field], 250_000);
        assert.equal(res.json()[isDefault], false);
        const after = (await me(u.token)).json();
        assert.equal(after[field], 250_000);
        assert.equal(after[isDefault], false);
        assert.equal(after[other], before[other], "the other cap is untouched");

        const changed = await call(t.app, {
          method: "PUT",
          url: path,
          token: u.token,
          body: { amount_krw: 7_000_000_000 },
        });
        assert.equal(changed.statusCode, 200, changed.body);
        assert.equal((await me(u.token)).json()[field], 7_000_000_000, "amounts beyond 32 bits survive the round trip");
      });

      test(`PUT ${path} with 0 restores the platform default, which is positive (not unlimited)`, async () => {
        const u = await signup(t.app);
        const initial = (await me(u.token)).json();
        assert.equal(initial[isDefault], true);
        assert.ok(
          Number.isInteger(initial[field]) && initial[field] > 0,
          `default is a positive amount: ${initial[field]}`,
        );
        const expectedDefault =
          field === "account_spend_cap_krw" ? t.config.defaultAccountSpendCapKrw : t.config.defaultAppSpendCapKrw;
        assert.equal(initial[field], expectedDefault);

        await call(t.app, { method: "PUT", url: path, token: u.token, body: { amount_krw: 12_345 } });
        assert.equal((await me(u.token)).json()[field], 12_345);
        const reset = await call(t.app, { method: "PUT", url: path, token: u.token, body: { amount_krw: 0 } });
        assert.equal(reset.statusCode, 200, reset.body);
        assert.equal(reset.json()[field], expectedDefault);
        assert.equal(reset.json()[isDefault], true);
        const after = (await me(u.token)).json();
        assert.equal(after[field], expectedDefault);
        assert.equal(after[isDefault], true);
      });

      test(`PUT ${path} refuses negative, fractional, textual, missing amounts and unknown fields with 400`, async () => {
        const u = await signup(t.app);
        await call(t.app, { method: "PUT", url: path, token: u.token, body: { amount_krw: 5_000 } });
        for (const body of [
          { amount_krw: -1 },
          { amount_krw: 1.5 },
          { amount_krw: "5000" },
          {},
          { amount_krw: 5000, currency: "USD" },
          { amount_krw: null },
        ]) {
          const res = await call(t.app, { method: "PUT", url: path, token: u.token, body });
          expectError(res, 400, "invalid_request");
        }
        assert.equal((await me(u.token)).json()[field], 5_000, "refused requests change nothing");
      });
    }
  });

  describe("scoped keys on account endpoints", () => {
    test("every account endpoint refuses a scoped key, even one with scope *, with 403 scope_insufficient and no effect", async () => {
      const u = await signup(t.app);
      const keys = [
        await scopedKey(t.app, u.token, ["*"]),
        await scopedKey(t.app, u.token, ["databases:read", "billing:*"]),
      ];
      const keyIds = await Promise.all(keys.map(tokenId));
      const table: RouteEntry[] = (t.app as any).routeTable;
      const accountRoutes = table.filter((r) => "account" in r.auth);
      const names = new Set(accountRoutes.map((r) => `${r.method} ${r.url}`));
      for (const must of [
        "GET /v1/api-keys",
        "POST /v1/api-keys",
        "DELETE /v1/api-keys/:id",
        "GET /v1/me",
        "PATCH /v1/me",
        "PUT /v1/me/account-spend-cap",
        "PUT /v1/me/app-spend-cap",
        "GET /v1/me/audit",
        "POST /v1/me/delete",
        "POST /v1/me/password",
      ]) {
        assert.ok(names.has(must), `${must} is declared account-only`);
      }
      // valid bodies, so only the key kind can be the reason for refusal
      const bodies: Record<string, unknown> = {
        "POST /v1/api-keys": { name: "escalate", scopes: ["*"] },
        "PATCH /v1/me": { display_name: "hijacked" },
        "PUT /v1/me/account-spend-cap": { amount_krw: 1 },
        "PUT /v1/me/app-spend-cap": { amount_krw: 1 },
        "POST /v1/me/password": { new_password: "taken over!!" },
      };
      for (const key of keys) {
        for (const r of accountRoutes) {
          const name = `${r.method} ${r.url}`;
          const url = r.url.replace(":id", keyIds[1]);
          const res = await call(t.app, { method: r.method as never, url, token: key, body: bodies[name] });
          try {
            expectError(res, 403, "scope_insufficient");
          } catch (err) {
            throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
          }
        }
      }
      const after = (await me(u.token)).json();
      assert.equal(after.display_name, null);
      assert.equal(after.account_spend_cap_is_default, true);
      assert.equal((await login(u.email, PASSWORD)).statusCode, 200);
      assert.equal(
        (await call(t.app, { url: "/v1/api-keys", token: u.token })).json().length,
        2,
        "no key issued, none revoked",
      );
      for (const key of keys) assert.equal((await call(t.app, { url: "/v1/token", token: key })).statusCode, 200);
    });
  });
});
