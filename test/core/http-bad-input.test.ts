import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

describe("bad input never gives a 500: one rule in the HTTP layer for every route", () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp();
    token = (await signup(t.app)).token;
  });
  after(async () => {
    await t.close();
  });

  const BAD = { nul: "a\u0000b", surrogate: "a\ud800b", lowSurrogate: "a\udc00b" };

  test("a NUL or unpaired surrogate in a path id is 404 not_found, on reads and mutations", async () => {
    for (const [method, url] of [
      ["GET", "/v1/databases/abc%00def"],
      ["DELETE", "/v1/databases/abc%00def"],
      ["POST", "/v1/databases/abc%00def/rotate-password"],
      ["DELETE", "/v1/api-keys/abc%00"],
      ["GET", "/v1/databases/%ED%A0%80"],
      ["GET", "/v1/databases/%ED%A0%80x"],
    ] as const) {
      expectError(await call(t.app, { method, url, token }), 404, "not_found");
    }
  });

  test("a NUL or unpaired surrogate in a body field is 400 invalid_request naming the field, and nothing is stored", async () => {
    for (const bad of Object.values(BAD)) {
      const me = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { display_name: bad } });
      expectError(me, 400, "invalid_request");
      assert.match(me.json().error.message, /display_name/);
      const key = await call(t.app, {
        method: "POST",
        url: "/v1/api-keys",
        token,
        body: { name: bad, scopes: ["databases:read"] },
      });
      expectError(key, 400, "invalid_request");
      assert.match(key.json().error.message, /"name"/);
      const cli = await call(t.app, {
        method: "POST",
        url: "/v1/cli/errors",
        token,
        body: {
          reports: [
            { kind: "crash", command: "ok" },
            { kind: "crash", message: bad },
          ],
        },
      });
      expectError(cli, 400, "invalid_request");
      assert.match(cli.json().error.message, /reports\.1\.message/);
    }
    assert.equal((await call(t.app, { url: "/v1/me", token })).json().display_name, null);
  });

  test("a NUL in an object key or a query parameter is 400 naming it", async () => {
    const key = await call(t.app, {
      method: "POST",
      url: "/v1/billing/toss/webhook?key=x",
      body: { ["pay\u0000mentKey"]: "x" },
    });
    expectError(key, 400, "invalid_request");
    const query = await call(t.app, { url: "/v1/me/audit?cursor=a%00b", token });
    expectError(query, 400, "invalid_request");
    assert.match(query.json().error.message, /cursor/);
  });

  test("a refused mutation is still audited, with its target made storable", async () => {
    const res = await call(t.app, { method: "DELETE", url: "/v1/api-keys/abc%00def", token });
    expectError(res, 404, "not_found");
    const { rows } = await t.db.query("SELECT target, status FROM audit_log WHERE request_id = $1", [
      res.headers["x-request-id"],
    ]);
    assert.deepEqual(rows, [{ target: "abc\\u0000def", status: 404 }]);
  });

  test("Fastify's own errors use the one error body: a 300-character path parameter is 414", async () => {
    const res = await call(t.app, { url: `/v1/databases/${"a".repeat(300)}`, token });
    expectError(res, 414, "uri_too_long");
    assert.deepEqual(Object.keys(res.json().error).sort(), ["code", "message"]);
  });

  test("a JSON body sent as text/plain is 415, not parsed", async () => {
    const res = await t.app.inject({
      method: "PATCH",
      url: "/v1/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
      payload: JSON.stringify({ display_name: "x" }),
    });
    expectError(res as never, 415, "unsupported_media_type");
  });

  test("a mutation without a body schema refuses fields and non-object bodies, accepts none or {}", async () => {
    const id = randomUUID();
    const extra = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${id}/rotate-password`,
      token,
      body: { zz_unknown: 1 },
    });
    expectError(extra, 400, "invalid_request");
    assert.match(extra.json().error.message, /zz_unknown/);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token, body: [1] }),
      400,
      "invalid_request",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token, body: {} }),
      404,
      "not_found",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token }),
      404,
      "not_found",
    );
    const other = await signup(t.app);
    expectError(
      await call(t.app, { method: "POST", url: "/v1/auth/logout", token: other.token, body: { everywhere: true } }),
      400,
      "invalid_request",
    );
    assert.equal(
      (await call(t.app, { url: "/v1/me", token: other.token })).statusCode,
      200,
      "the refused logout did nothing",
    );
  });
  test("JSON nested deeper than 64 levels is 400 invalid_request naming the limit, on every route; shallower is fine", async () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
    const rpc = (params: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${params}}`;
    const send = (url: string, payload: string) =>
      t.app.inject({
        method: "POST",
        url,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        payload,
      });
    for (const [url, payload] of [
      [`/v1/builds/${randomUUID()}/events`, `{"phase":"building","message":"m","detail":${nested(5000)}}`],
      [`/v1/builds/${randomUUID()}/cancel`, `{"detail":${nested(5000)}}`],
      ["/v1/mcp", rpc(nested(5000))],
      ["/v1/mcp", rpc(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)],
    ] as const) {
      const res = await send(url, payload);
      expectError(res, 400, "invalid_request");
      assert.match(res.json().error.message, /deeper than 64 levels/);
    }
    // brackets inside strings are text, not nesting; 60 levels of real nesting pass
    const fine = await send("/v1/mcp", rpc(`{"s":"${"[{".repeat(1000)}","deep":${nested(60)}}`));
    assert.equal(fine.statusCode, 200, fine.body);
  });
});
