import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { accountCalls, sleep } from "./account-helpers.js";

/** /v1/api-keys: scoped keys issued, listed, expired and revoked. */
describe("account: API keys", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });
  const { me, tokenId } = accountCalls(() => t);

  describe("/v1/api-keys", () => {
    test("POST issues an opk_ key shown once; it works; the list never contains the secret", async () => {
      const u = await signup(t.app);
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "ci deploy", scopes: ["databases:read", "pods:write:web-1"] },
      });
      assert.equal(res.statusCode, 201, res.body);
      const issued = res.json();
      assert.match(issued.key, /^opk_[A-Za-z0-9_-]{32,}$/);
      assert.equal(issued.name, "ci deploy");
      assert.deepEqual(issued.scopes, ["databases:read", "pods:write:web-1"]);
      assert.equal(issued.expires_at, null);
      assert.ok(
        issued.prefix.startsWith("opk_") &&
          issued.key.startsWith(issued.prefix) &&
          issued.prefix.length < issued.key.length / 2,
      );

      const inspect = await call(t.app, { url: "/v1/token", token: issued.key });
      assert.equal(inspect.statusCode, 200);
      assert.equal(inspect.json().id, issued.id);
      assert.equal(inspect.json().kind, "scoped");

      const list = await call(t.app, { url: "/v1/api-keys", token: u.token });
      assert.equal(list.statusCode, 200);
      assert.ok(!list.body.includes(issued.key), "the list never shows the secret");
      const listed = list.json();
      assert.equal(listed.length, 1, "only scoped keys are listed, not sign-in sessions");
      assert.equal(listed[0].id, issued.id);
      assert.equal(listed[0].prefix, issued.prefix);
      assert.ok(!("key" in listed[0]));
      assert.ok(listed[0].last_used_at, "use is recorded");

      // the store keeps a hash only
      const { rows } = await t.db.query("SELECT t::text AS row FROM tokens t WHERE id = $1", [issued.id]);
      assert.ok(!rows[0].row.includes(issued.key.slice(issued.prefix.length)), "the secret is not stored");
    });

    test("keys of one account are invisible to another", async () => {
      const a = await signup(t.app);
      const b = await signup(t.app);
      await scopedKey(t.app, a.token, ["billing:read"]);
      assert.deepEqual((await call(t.app, { url: "/v1/api-keys", token: b.token })).json(), []);
      assert.equal((await call(t.app, { url: "/v1/api-keys", token: a.token })).json().length, 1);
    });

    test("every valid scope form is accepted at issuance", async () => {
      const u = await signup(t.app);
      const scopes = [
        "*",
        "databases:read",
        "databases:write",
        "org:*",
        "linked-apps:read",
        "pod-templates:write:tmpl-1",
        "static:write:my-site",
        "pods:read:0b0c6a3e-7d4f-4a55-9b1e-2f2a8d0c1e11",
      ];
      for (const s of scopes) await scopedKey(t.app, u.token, [s]);
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "all", scopes },
      });
      assert.equal(res.statusCode, 201, res.body);
    });

    test("unknown or malformed scope strings are 400 and issue no key", async () => {
      const u = await signup(t.app);
      const bad = [
        "databases",
        "databases:delete",
        "dbs:read",
        "org:read:acme",
        "billing:write:x",
        "databases:read:a:b",
        "DATABASES:read",
        "*:read",
        "databases:read:",
        "",
        " databases:read",
      ];
      for (const s of bad) {
        const res = await call(t.app, {
          method: "POST",
          url: "/v1/api-keys",
          token: u.token,
          body: { name: "bad", scopes: ["databases:read", s] },
        });
        expectError(res, 400);
        assert.ok(!("key" in res.json()));
      }
      for (const body of [
        { name: "none", scopes: [] },
        { name: "noscopes" },
        { scopes: ["*"] },
        { name: "", scopes: ["*"] },
        { name: "x", scopes: ["*"], kind: "full" },
      ]) {
        expectError(
          await call(t.app, { method: "POST", url: "/v1/api-keys", token: u.token, body }),
          400,
          "invalid_request",
        );
      }
      assert.deepEqual((await call(t.app, { url: "/v1/api-keys", token: u.token })).json(), []);
    });

    test("expires_at in the past, now, or not a time is 400; a future one is stored and returned", async () => {
      const u = await signup(t.app);
      for (const expires_at of [
        new Date(Date.now() - 60_000).toISOString(),
        "2000-01-01T00:00:00Z",
        "tomorrow",
        "2099-13-40T00:00:00Z",
      ]) {
        const res = await call(t.app, {
          method: "POST",
          url: "/v1/api-keys",
          token: u.token,
          body: { name: "x", scopes: ["*"], expires_at },
        });
        expectError(res, 400);
        assert.match(res.json().error.message, /expires_at/, res.body);
      }
      assert.deepEqual((await call(t.app, { url: "/v1/api-keys", token: u.token })).json(), []);

      const at = new Date(Date.now() + 86_400_000);
      at.setMilliseconds(0);
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "day", scopes: ["*"], expires_at: at.toISOString().replace(".000Z", "+00:00") },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().expires_at, at.toISOString());
      assert.equal((await call(t.app, { url: "/v1/api-keys", token: u.token })).json()[0].expires_at, at.toISOString());
      assert.equal(
        (await call(t.app, { url: "/v1/token", token: res.json().key })).json().expires_at,
        at.toISOString(),
      );
    });

    test("expires_at must be an RFC 3339 time with a zone: a zoneless or date-only time is 400, not read in server time", async () => {
      const u = await signup(t.app);
      for (const expires_at of ["2099-01-01T10:00:00", "2099-01-01", "1 January 2099", "01/02/2099"]) {
        const res = await call(t.app, {
          method: "POST",
          url: "/v1/api-keys",
          token: u.token,
          body: { name: "x", scopes: ["*"], expires_at },
        });
        expectError(res, 400, "invalid_request");
        assert.match(res.json().error.message, /expires_at/, res.body);
      }
      const zoned = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "x", scopes: ["*"], expires_at: "2099-01-01T10:00:00+09:00" },
      });
      assert.equal(zoned.statusCode, 201, zoned.body);
      assert.equal(zoned.json().expires_at, "2099-01-01T01:00:00.000Z");
    });

    test("an expired key is 401 auth_required, also when it was just in use", async () => {
      const u = await signup(t.app);
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "short-lived", scopes: ["*"], expires_at: new Date(Date.now() + 1500).toISOString() },
      });
      assert.equal(res.statusCode, 201, res.body);
      const key = res.json().key;
      assert.equal((await call(t.app, { url: "/v1/gpus", token: key })).statusCode, 200, "works before expiry");
      const wait = Date.parse(res.json().expires_at) - Date.now() + 100;
      await sleep(Math.max(0, wait));
      expectError(await call(t.app, { url: "/v1/gpus", token: key }), 401, "auth_required");
      expectError(await call(t.app, { url: "/v1/token", token: key }), 401, "auth_required");
    });

    test("a key whose stored expiry has passed is 401 auth_required", async () => {
      const u = await signup(t.app);
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "k", scopes: ["*"] },
      });
      await t.db.query("UPDATE tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [res.json().id]);
      expectError(await call(t.app, { url: "/v1/gpus", token: res.json().key }), 401, "auth_required");
      assert.equal((await me(u.token)).statusCode, 200, "the account's session is unaffected");
    });

    test("DELETE revokes a key at once (401 afterwards), drops it from the list, and a second DELETE is 404", async () => {
      const u = await signup(t.app);
      const keep = await scopedKey(t.app, u.token, ["databases:read"]);
      const res = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token: u.token,
        body: { name: "doomed", scopes: ["*"] },
      });
      const { id, key } = res.json();
      assert.equal((await call(t.app, { url: "/v1/gpus", token: key })).statusCode, 200);

      const del = await call(t.app, { method: "DELETE", url: `/v1/api-keys/${id}`, token: u.token });
      assert.equal(del.statusCode, 204, del.body);
      expectError(await call(t.app, { url: "/v1/gpus", token: key }), 401, "auth_required");
      const list = (await call(t.app, { url: "/v1/api-keys", token: u.token })).json();
      assert.deepEqual(
        list.map((k: { id: string }) => k.id),
        [await tokenId(keep)],
      );
      assert.equal((await call(t.app, { url: "/v1/gpus", token: keep })).statusCode, 200, "other keys keep working");
      expectError(await call(t.app, { method: "DELETE", url: `/v1/api-keys/${id}`, token: u.token }), 404, "not_found");
    });

    test("DELETE of another account's key id, a sign-in session's id or an unknown id is 404 and revokes nothing", async () => {
      const a = await signup(t.app);
      const b = await signup(t.app);
      const aKey = await scopedKey(t.app, a.token, ["*"]);
      const aKeyId = await tokenId(aKey);
      expectError(
        await call(t.app, { method: "DELETE", url: `/v1/api-keys/${aKeyId}`, token: b.token }),
        404,
        "not_found",
      );
      assert.equal((await call(t.app, { url: "/v1/gpus", token: aKey })).statusCode, 200, "a's key still works");

      const bSession = await tokenId(b.token);
      expectError(
        await call(t.app, { method: "DELETE", url: `/v1/api-keys/${bSession}`, token: b.token }),
        404,
        "not_found",
      );
      assert.equal((await me(b.token)).statusCode, 200, "the session is not an API key and stays");

      expectError(
        await call(t.app, { method: "DELETE", url: `/v1/api-keys/${randomUUID()}`, token: a.token }),
        404,
        "not_found",
      );
      expectError(
        await call(t.app, { method: "DELETE", url: "/v1/api-keys/not-a-uuid", token: a.token }),
        400,
        "invalid_request",
      );
    });
  });
});
