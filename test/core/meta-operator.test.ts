import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  FLEET_TOKEN,
  OPERATOR_TOKEN,
  call,
  createTestApp,
  expectError,
  scopedKey,
  signup,
  type TestApp,
} from "../helpers/app.js";

describe("meta", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  describe("POST /v1/operator/accounts", () => {
    test("creates an account with the operator token: 201 {id, email, token}; the token works on /v1/me", async () => {
      const email = `Op.Made-${randomUUID()}@Example.COM`;
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email, display_name: "Made By Operator" },
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ["email", "id", "token"]);
      assert.equal(body.email, email.toLowerCase(), "e-mail normalised");
      assert.match(body.token, /^op_u_/);
      const me = await call(t.app, { url: "/v1/me", token: body.token });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json().id, body.id);
      assert.equal(me.json().email, email.toLowerCase());
      assert.equal(me.json().display_name, "Made By Operator");
      assert.equal(me.json().has_password, false);
    });

    test("a taken e-mail is 409; a bad e-mail or unknown field is 400", async () => {
      const u = await signup(t.app);
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/operator/accounts",
          token: OPERATOR_TOKEN,
          body: { email: u.email.toUpperCase() },
        }),
        409,
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/operator/accounts",
          token: OPERATOR_TOKEN,
          body: { email: "not an email" },
        }),
        400,
        "invalid_request",
      );
      const extra = await call(t.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email: `x-${randomUUID()}@example.com`, password: "sneaky password" },
      });
      expectError(extra, 400, "invalid_request");
      assert.match(extra.json().error.message, /password/);
    });

    test("user tokens, scoped keys, the fleet token and no token are refused with 401 and create nothing", async () => {
      const u = await signup(t.app);
      const key = await scopedKey(t.app, u.token, ["*"]);
      const email = `refused-${randomUUID()}@example.com`;
      for (const token of [undefined, u.token, key, FLEET_TOKEN, `${OPERATOR_TOKEN}0`]) {
        expectError(
          await call(t.app, { method: "POST", url: "/v1/operator/accounts", token, body: { email } }),
          401,
          "auth_required",
        );
      }
      const { rows } = await t.db.query("SELECT 1 FROM accounts WHERE email = $1", [email]);
      assert.equal(rows.length, 0);
    });
  });

  describe("with SIGNUP=closed, EDITION=onprem, BASE_DOMAIN set and no FLEET_TOKEN", () => {
    let c: TestApp;
    before(async () => {
      c = await createTestApp({
        env: { SIGNUP: "closed", EDITION: "onprem", BASE_DOMAIN: "cloud.example.org", FLEET_TOKEN: "" },
      });
    });
    after(async () => {
      await c.close();
    });

    test("sign-up is 403 while the operator can still create accounts whose tokens work", async () => {
      const email = `closed-${randomUUID()}@example.com`;
      expectError(
        await call(c.app, {
          method: "POST",
          url: "/v1/auth/signup",
          body: { email, password: "long enough password" },
        }),
        403,
      );
      const res = await call(c.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email },
      });
      assert.equal(res.statusCode, 201, res.body);
      const me = await call(c.app, { url: "/v1/me", token: res.json().token });
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(me.json().email, email);
      expectError(
        await call(c.app, {
          method: "POST",
          url: "/v1/auth/signup",
          body: { email: `other-${email}`, password: "long enough password" },
        }),
        403,
      );
    });

    test("/v1/edition and the manual reflect the configured edition and base domain", async () => {
      assert.deepEqual((await call(c.app, { url: "/v1/edition" })).json(), {
        edition: "onprem",
        base_domain: "cloud.example.org",
        login_method: "password",
      });
      assert.match((await call(c.app, { url: "/v1/manual?brief=1" })).body, /cloud\.example\.org/);
    });

    test("with no FLEET_TOKEN configured the fleet endpoint refuses every bearer", async () => {
      for (const token of [undefined, FLEET_TOKEN, OPERATOR_TOKEN, ""]) {
        expectError(
          await call(c.app, {
            method: "POST",
            url: "/v1/fleet/patch-report",
            token: token || undefined,
            body: { host: "h" },
          }),
          401,
          "auth_required",
        );
      }
    });
  });
});
