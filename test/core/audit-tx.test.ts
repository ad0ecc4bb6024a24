import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

/**
 * The audit row of a change commits in the change's transaction (audit/record.ts auditedTransaction):
 * when the row cannot be written, the change is rolled back too, and the caller gets a 500.
 */
describe("audit rows commit with their change", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    await t.db.query(`CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit row refused for %', NEW.action; END $$`);
  });
  after(async () => {
    await t.close();
  });

  const me = async (token: string) => {
    const res = await call(t.app, { url: "/v1/me", token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const audit = async (token: string) => {
    const res = await call(t.app, { url: "/v1/me/audit?limit=200", token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().items as { action: string; status: number; token_id: string; request_id: string | null }[];
  };
  /**
   * Makes the insert of the account's success rows for `action` fail (the row written in the change's
   * transaction) until the returned function runs. The row of the failed request (status 500) still goes in.
   */
  const refuseAudit = async (accountId: string, action: string, opts: { failureRowsToo?: boolean } = {}) => {
    const name = `refuse_${action}_${accountId.replace(/-/g, "")}`;
    await t.db.query(`CREATE TRIGGER ${name} BEFORE INSERT ON audit_log FOR EACH ROW
      WHEN (NEW.action = '${action}' AND NEW.account_id = '${accountId}' ${opts.failureRowsToo ? "" : "AND NEW.status < 400"})
      EXECUTE FUNCTION test_refuse_audit()`);
    return () => t.db.query(`DROP TRIGGER ${name} ON audit_log`);
  };

  test("a PATCH /v1/me whose audit insert fails is rolled back: 500 internal, the old name stays; without the failure it commits with its row", async () => {
    const u = await signup(t.app);
    const named = await call(t.app, {
      method: "PATCH",
      url: "/v1/me",
      token: u.token,
      body: { display_name: "before" },
    });
    assert.equal(named.statusCode, 200, named.body);

    const allow = await refuseAudit(u.id, "updateMe");
    const refused = await call(t.app, {
      method: "PATCH",
      url: "/v1/me",
      token: u.token,
      body: { display_name: "after" },
    });
    expectError(refused, 500, "internal");
    assert.doesNotMatch(refused.body, /audit row refused/, "the database error stays in the logs");
    assert.equal((await me(u.token)).display_name, "before", "the change was rolled back with its audit row");
    const { rows } = await t.db.query("SELECT display_name FROM accounts WHERE id = $1", [u.id]);
    assert.equal(rows[0].display_name, "before");

    await allow();
    const res = await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { display_name: "after" } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await me(u.token)).display_name, "after");
    const items = await audit(u.token);
    assert.equal(items[0].action, "updateMe");
    assert.equal(items[0].status, 200);
    assert.equal(items[0].request_id, res.headers["x-request-id"]);
    assert.deepEqual(
      items.filter((r) => r.action === "updateMe").map((r) => r.status),
      [200, 500, 200],
      "one row per committed change, and the failure's",
    );
  });

  test("the audit log is newest first also where ids gain a digit (99 -> 100)", async () => {
    const u = await signup(t.app);
    const {
      rows: [{ last }],
    } = await t.db.query("SELECT last_value::int AS last FROM audit_log_id_seq");
    if (last < 95) await t.db.query("SELECT setval('audit_log_id_seq', 95)");
    for (let i = 0; i < 12; i++)
      assert.equal(
        (await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { display_name: `n${i}` } }))
          .statusCode,
        200,
      );
    const ids = (await audit(u.token)).map((r) => Number((r as unknown as { id: string }).id));
    assert.ok((ids.some((id) => id < 100) && ids.some((id) => id >= 100)) || last >= 95, `ids span 99 -> 100: ${ids}`);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
  });

  // The HTTP layer writes the row of a failed request after the answer is decided (app.ts storeAndAudit,
  // onSend); when that insert fails as well, the hook's error escapes into Fastify's own serializer,
  // which answers FST_ERR_FAILED_ERROR_SERIALIZATION with the database message. Needs a fix in app.ts.
  test("when the failure's own row cannot be written either, the answer is still the error body", async () => {
    const u = await signup(t.app);
    const allow = await refuseAudit(u.id, "updateMe", { failureRowsToo: true });
    try {
      const res = await call(t.app, { method: "PATCH", url: "/v1/me", token: u.token, body: { display_name: "x" } });
      expectError(res, 500, "internal");
      assert.doesNotMatch(res.body, /audit row refused/);
      assert.equal((await me(u.token)).display_name, null);
    } finally {
      await allow();
    }
  });

  test("a key issue whose audit insert fails issues no key", async () => {
    const u = await signup(t.app);
    const allow = await refuseAudit(u.id, "createApiKey");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/api-keys", token: u.token, body: { name: "k", scopes: ["*"] } }),
      500,
      "internal",
    );
    assert.deepEqual((await call(t.app, { url: "/v1/api-keys", token: u.token })).json(), []);
    await allow();
    assert.equal(
      (await call(t.app, { method: "POST", url: "/v1/api-keys", token: u.token, body: { name: "k", scopes: ["*"] } }))
        .statusCode,
      201,
    );
    assert.equal((await call(t.app, { url: "/v1/api-keys", token: u.token })).json().length, 1);
  });

  test("successful mutations of every audited kind leave exactly one row each, with the success status, as soon as they answer", async () => {
    const u = await signup(t.app);
    const session = (await call(t.app, { url: "/v1/token", token: u.token })).json().id;
    const steps: {
      method: "PATCH" | "PUT" | "POST" | "DELETE";
      url: string | (() => string);
      body?: unknown;
      action: string;
      status: number;
    }[] = [
      { method: "PATCH", url: "/v1/me", body: { locale: "ko" }, action: "updateMe", status: 200 },
      {
        method: "PUT",
        url: "/v1/me/account-spend-cap",
        body: { amount_krw: 5000 },
        action: "setAccountSpendCap",
        status: 200,
      },
      { method: "PUT", url: "/v1/me/app-spend-cap", body: { amount_krw: 0 }, action: "setAppSpendCap", status: 200 },
      {
        method: "POST",
        url: "/v1/api-keys",
        body: { name: "k", scopes: ["databases:read"] },
        action: "createApiKey",
        status: 201,
      },
      { method: "DELETE", url: () => `/v1/api-keys/${keyId}`, action: "revokeApiKey", status: 204 },
      {
        method: "POST",
        url: "/v1/cli/errors",
        body: { reports: [{ message: "boom" }] },
        action: "reportCliErrors",
        status: 204,
      },
      {
        method: "POST",
        url: "/v1/me/password",
        body: { current_password: "correct horse battery", new_password: "another passphrase" },
        action: "setPassword",
        status: 204,
      },
    ];
    let keyId = "";
    for (const [i, s] of steps.entries()) {
      const res = await call(t.app, {
        method: s.method,
        url: typeof s.url === "string" ? s.url : s.url(),
        token: u.token,
        body: s.body,
      });
      assert.equal(res.statusCode, s.status, `${s.action}: ${res.body}`);
      if (s.action === "createApiKey") keyId = res.json().id;
      const items = await audit(u.token);
      assert.equal(items.length, i + 1, `${s.action}: its row is there when the answer arrives, and only one`);
      assert.equal(items[0].action, s.action, JSON.stringify(items));
      assert.equal(items[0].status, s.status);
      assert.equal(items[0].token_id, session);
      assert.equal(items[0].request_id, res.headers["x-request-id"]);
    }
    // the scoped key carries the caller's owner
    const { rows } = await t.db.query("SELECT owner_kind, owner_id FROM tokens WHERE id = $1", [keyId]);
    assert.deepEqual(rows[0], { owner_kind: "account", owner_id: u.id });
  });

  test("sign-out and deletion commit their rows with the change", async () => {
    const u = await signup(t.app);
    const other = (
      await call(t.app, {
        method: "POST",
        url: "/v1/auth/login",
        body: { email: u.email, password: "correct horse battery" },
      })
    ).json().token;
    assert.equal((await call(t.app, { method: "POST", url: "/v1/auth/logout", token: other })).statusCode, 204);
    assert.equal((await call(t.app, { method: "POST", url: "/v1/me/delete", token: u.token })).statusCode, 204);
    const { rows } = await t.db.query("SELECT action, status FROM audit_log WHERE account_id = $1 ORDER BY id", [u.id]);
    assert.deepEqual(rows, [
      { action: "logout", status: 204 },
      { action: "deleteMe", status: 204 },
    ]);
  });

  test("a refused mutation changes nothing and is recorded with its error status", async () => {
    const u = await signup(t.app);
    expectError(
      await call(t.app, { method: "DELETE", url: "/v1/api-keys/00000000-0000-4000-8000-000000000000", token: u.token }),
      404,
      "not_found",
    );
    const items = await audit(u.token);
    assert.deepEqual(
      items.map((r) => [r.action, r.status]),
      [["revokeApiKey", 404]],
    );
  });
});
