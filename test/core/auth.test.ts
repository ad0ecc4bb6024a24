import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";

describe("sign-up, sign-in and tokens", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t.close();
  });

  test("signup returns 201 with the account and a full-access op_u_ token that works", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: "first@example.com", password: "long enough pw" },
    });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.match(body.token, /^op_u_[A-Za-z0-9_-]{40,}$/);
    assert.equal(body.account.email, "first@example.com");
    const me = await call(t.app, { url: "/v1/me", token: body.token });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().id, body.account.id);
  });

  test("e-mail is normalised: a taken address in other case gives 409 and login ignores case", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: "  Mixed.Case@Example.COM ", password: "long enough pw" },
    });
    assert.equal(res.statusCode, 400, "surrounding spaces are not a valid e-mail");
    const ok = await call(t.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: "Mixed.Case@Example.COM", password: "long enough pw" },
    });
    assert.equal(ok.statusCode, 201);
    assert.equal(ok.json().account.email, "mixed.case@example.com");
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/auth/signup",
        body: { email: "mixed.case@example.com", password: "another pw 123" },
      }),
      409,
      "email_taken",
    );
    const login = await call(t.app, {
      method: "POST",
      url: "/v1/auth/login",
      body: { email: "MIXED.case@example.com", password: "long enough pw" },
    });
    assert.equal(login.statusCode, 200);
    assert.match(login.json().token, /^op_u_/);
  });

  test("passwords are stored as scrypt hashes and tokens only as SHA-256 hashes", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: "hash@example.com", password: "plain text secret" },
    });
    const { account, token } = res.json();
    const acct = await t.db.query("SELECT password_hash FROM accounts WHERE id = $1", [account.id]);
    assert.match(acct.rows[0].password_hash, /^scrypt\$/);
    assert.ok(!acct.rows[0].password_hash.includes("plain text secret"));
    const rows = await t.db.query("SELECT secret_hash, display_prefix FROM tokens WHERE account_id = $1", [account.id]);
    assert.equal(rows.rowCount, 1);
    assert.deepEqual(rows.rows[0].secret_hash, createHash("sha256").update(token).digest());
    const dump = JSON.stringify((await t.db.query("SELECT * FROM tokens WHERE account_id = $1", [account.id])).rows);
    assert.ok(!dump.includes(token), "the secret itself is nowhere in the table");
  });

  test("wrong password and unknown e-mail both give 401 invalid_credentials", async () => {
    await signup(t.app, "pw@example.com");
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/auth/login",
        body: { email: "pw@example.com", password: "wrong password" },
      }),
      401,
      "invalid_credentials",
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/auth/login",
        body: { email: "nobody@example.com", password: "whatever1" },
      }),
      401,
      "invalid_credentials",
    );
  });

  test("signup validates its body: short password and bad e-mail give 400 naming the field", async () => {
    const short = await call(t.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: "s@example.com", password: "short" },
    });
    expectError(short, 400, "invalid_request");
    assert.match(short.json().error.message, /password/);
    const bad = await call(t.app, {
      method: "POST",
      url: "/v1/auth/signup",
      body: { email: "not-an-email", password: "long enough pw" },
    });
    expectError(bad, 400, "invalid_request");
    assert.match(bad.json().error.message, /email/);
  });

  test("logout revokes the calling token only", async () => {
    const a = await signup(t.app);
    const second = (
      await call(t.app, {
        method: "POST",
        url: "/v1/auth/login",
        body: { email: a.email, password: "correct horse battery" },
      })
    ).json().token;
    const out = await call(t.app, { method: "POST", url: "/v1/auth/logout", token: a.token });
    assert.equal(out.statusCode, 204);
    expectError(await call(t.app, { url: "/v1/me", token: a.token }), 401, "auth_required");
    assert.equal((await call(t.app, { url: "/v1/me", token: second })).statusCode, 200);
  });

  test("missing, malformed and unknown tokens give 401 auth_required", async () => {
    expectError(await call(t.app, { url: "/v1/me" }), 401, "auth_required");
    expectError(await call(t.app, { url: "/v1/me", headers: { authorization: "Basic abc" } }), 401, "auth_required");
    expectError(await call(t.app, { url: "/v1/me", token: "op_u_" + "x".repeat(43) }), 401, "auth_required");
  });

  test("GET /v1/token describes a full token and a scoped key without revealing the secret", async () => {
    const a = await signup(t.app);
    const full = await call(t.app, { url: "/v1/token", token: a.token });
    assert.equal(full.statusCode, 200);
    assert.equal(full.json().kind, "full");
    assert.equal(full.json().account_id, a.id);
    assert.ok(!full.body.includes(a.token));
    const expires = new Date(Date.now() + 3600_000).toISOString();
    const key = await scopedKey(t.app, a.token, ["databases:read", "billing:*"], { expires_at: expires });
    const scoped = await call(t.app, { url: "/v1/token", token: key });
    assert.equal(scoped.statusCode, 200);
    const body = scoped.json();
    assert.equal(body.kind, "scoped");
    assert.deepEqual(body.scopes.sort(), ["billing:*", "databases:read"]);
    assert.equal(new Date(body.expires_at).toISOString(), expires);
    assert.ok(!scoped.body.includes(key));
  });

  test("signup is refused with 403 when SIGNUP=closed", async () => {
    const closed = await createTestApp({ env: { SIGNUP: "closed" } });
    try {
      expectError(
        await call(closed.app, {
          method: "POST",
          url: "/v1/auth/signup",
          body: { email: "c@example.com", password: "long enough pw" },
        }),
        403,
        "signup_closed",
      );
    } finally {
      await closed.close();
    }
  });
});

describe("revocation across API processes", () => {
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await createTestApp();
    b = await createTestApp({ databaseUrl: a.url });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  test("a key revoked through one process is refused by another that had it cached", async () => {
    const user = await signup(a.app);
    const key = await scopedKey(a.app, user.token, ["databases:read"]);
    assert.equal(
      (await call(b.app, { url: "/v1/token", token: key })).statusCode,
      200,
      "process B has now cached the key",
    );
    const list = await call(a.app, { url: "/v1/api-keys", token: user.token });
    const id = list.json()[0].id;
    assert.equal(
      (await call(a.app, { method: "DELETE", url: `/v1/api-keys/${id}`, token: user.token })).statusCode,
      204,
    );
    // NOTIFY is delivered asynchronously; the cache TTL is 30 s, so a refusal within 5 s (room for a loaded CI
    // machine) proves the broadcast
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await call(b.app, { url: "/v1/token", token: key })).statusCode;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 401);
  });

  test("deleting an account ends its tokens on every process", async () => {
    const user = await signup(a.app);
    assert.equal((await call(b.app, { url: "/v1/me", token: user.token })).statusCode, 200);
    const other = (
      await call(a.app, {
        method: "POST",
        url: "/v1/auth/login",
        body: { email: user.email, password: "correct horse battery" },
      })
    ).json().token;
    assert.equal((await call(a.app, { method: "POST", url: "/v1/me/delete", token: other })).statusCode, 204);
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) {
      status = (await call(b.app, { url: "/v1/me", token: user.token })).statusCode;
      if (status !== 401) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 401);
  });
});
