import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { OPERATOR_TOKEN, call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { accountCalls, PASSWORD } from "./account-helpers.js";

/** POST /v1/me/password and POST /v1/me/delete: what ends which sessions. */
describe("account: password and deletion", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });
  const { login, me, audit } = accountCalls(() => t);

  describe("POST /v1/me/password", () => {
    test("an account without a password (operator-created) sets one without current_password, then logs in with it", async () => {
      const email = `nopw-${randomUUID()}@example.com`;
      const created = await call(t.app, {
        method: "POST",
        url: "/v1/operator/accounts",
        token: OPERATOR_TOKEN,
        body: { email },
      });
      assert.equal(created.statusCode, 201, created.body);
      const token = created.json().token;
      assert.equal((await me(token)).json().has_password, false);
      expectError(await login(email, "anything at all"), 401);

      const res = await call(t.app, {
        method: "POST",
        url: "/v1/me/password",
        token,
        body: { new_password: "first password" },
      });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, "");
      assert.equal((await me(token)).json().has_password, true);
      assert.equal((await login(email, "first password")).statusCode, 200);
      assert.equal((await me(token)).statusCode, 200, "the caller's session is kept");
    });

    test("changing a password requires current_password: missing is 400, wrong is 403, and neither changes it", async () => {
      const u = await signup(t.app);
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/me/password",
          token: u.token,
          body: { new_password: "brand new password" },
        }),
        400,
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/me/password",
          token: u.token,
          body: { current_password: "not the password", new_password: "brand new password" },
        }),
        403,
      );
      assert.equal((await login(u.email, PASSWORD)).statusCode, 200, "the old password still works");
      expectError(await login(u.email, "brand new password"), 401);
      assert.equal((await me(u.token)).statusCode, 200, "a failed change ends no session");
    });

    test("a change with the right current_password: old password fails, new works, other sessions end, the caller's stays", async () => {
      const u = await signup(t.app);
      const otherLogin = await login(u.email, PASSWORD);
      assert.equal(otherLogin.statusCode, 200);
      const other = otherLogin.json().token;
      const key = await scopedKey(t.app, u.token, ["databases:read"]);
      // use every token once so any auth cache holds them
      assert.equal((await me(other)).statusCode, 200);
      assert.equal((await call(t.app, { url: "/v1/gpus", token: key })).statusCode, 200);

      const res = await call(t.app, {
        method: "POST",
        url: "/v1/me/password",
        token: u.token,
        body: { current_password: PASSWORD, new_password: "a better passphrase" },
      });
      assert.equal(res.statusCode, 204, res.body);

      expectError(await login(u.email, PASSWORD), 401);
      assert.equal((await login(u.email, "a better passphrase")).statusCode, 200);
      expectError(await me(other), 401, "auth_required");
      assert.equal((await me(u.token)).statusCode, 200, "the caller's session is kept");
      // scoped keys are not sign-in sessions: automation keeps working across a password change
      assert.equal((await call(t.app, { url: "/v1/gpus", token: key })).statusCode, 200);
    });

    test("a new password shorter than 8 characters or unknown fields are 400 naming the field", async () => {
      const u = await signup(t.app);
      const short = await call(t.app, {
        method: "POST",
        url: "/v1/me/password",
        token: u.token,
        body: { current_password: PASSWORD, new_password: "short" },
      });
      expectError(short, 400, "invalid_request");
      assert.match(short.json().error.message, /new_password/);
      const extra = await call(t.app, {
        method: "POST",
        url: "/v1/me/password",
        token: u.token,
        body: { current_password: PASSWORD, new_password: "long enough pw", email: "x@example.com" },
      });
      expectError(extra, 400, "invalid_request");
      assert.match(extra.json().error.message, /email/);
      assert.equal((await login(u.email, PASSWORD)).statusCode, 200);
    });
  });

  describe("POST /v1/me/delete", () => {
    test("deleting revokes every token (sessions and scoped keys), blocks login, and frees the e-mail", async () => {
      const u = await signup(t.app);
      const bystander = await signup(t.app);
      const second = (await login(u.email, PASSWORD)).json().token;
      const key = await scopedKey(t.app, u.token, ["*"]);
      const limitedKey = await scopedKey(t.app, u.token, ["databases:read:some-db"]);
      for (const tok of [u.token, second, key, limitedKey])
        assert.equal((await call(t.app, { url: "/v1/token", token: tok })).statusCode, 200);

      const res = await call(t.app, { method: "POST", url: "/v1/me/delete", token: u.token });
      assert.equal(res.statusCode, 204, res.body);

      for (const tok of [u.token, second, key, limitedKey]) {
        expectError(await call(t.app, { url: "/v1/token", token: tok }), 401, "auth_required");
        expectError(await call(t.app, { url: "/v1/gpus", token: tok }), 401, "auth_required");
      }
      expectError(await me(u.token), 401, "auth_required");
      expectError(await login(u.email, PASSWORD), 401);
      assert.equal((await me(bystander.token)).statusCode, 200, "other accounts are untouched");

      const again = await signup(t.app, u.email);
      assert.notEqual(again.id, u.id, "a new account, not the old one revived");
      const fresh = (await me(again.token)).json();
      assert.equal(fresh.email, u.email);
      assert.equal(fresh.display_name, null);
      const keys = await call(t.app, { url: "/v1/api-keys", token: again.token });
      assert.deepEqual(keys.json(), [], "the old account's keys do not carry over");
      assert.deepEqual((await audit(again.token)).items, [], "nor does its activity log");
      expectError(await call(t.app, { url: "/v1/token", token: key }), 401, "auth_required");
      assert.equal((await login(u.email, PASSWORD)).statusCode, 200, "the new account logs in");
    });

    test("a deleted account's delete cannot be replayed with its old token", async () => {
      const u = await signup(t.app);
      assert.equal((await call(t.app, { method: "POST", url: "/v1/me/delete", token: u.token })).statusCode, 204);
      expectError(await call(t.app, { method: "POST", url: "/v1/me/delete", token: u.token }), 401, "auth_required");
    });
  });
});
