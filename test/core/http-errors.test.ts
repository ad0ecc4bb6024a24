import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

describe("error bodies and request ids", () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp();
    token = (await signup(t.app)).token;
  });
  after(async () => {
    await t.close();
  });

  test("malformed JSON gives 400 bad_json", async () => {
    const res = await t.app.inject({
      method: "PATCH",
      url: "/v1/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: '{"locale":',
    });
    expectError(res as never, 400, "bad_json");
  });

  test("unknown path gives 404 not_found in the error body", async () => {
    expectError(await call(t.app, { url: "/v1/no/such/thing" }), 404, "not_found");
  });

  test("a schema violation gives 400 invalid_request naming the field", async () => {
    const res = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "fr" } });
    expectError(res, 400, "invalid_request");
    assert.match(res.json().error.message, /locale/);
  });

  test("unknown fields in a mutation body are rejected, nothing is changed", async () => {
    const res = await call(t.app, {
      method: "PATCH",
      url: "/v1/me",
      token,
      body: { display_name: "x", email: "evil@example.com" },
    });
    expectError(res, 400, "invalid_request");
    assert.match(res.json().error.message, /email/);
    const me = (await call(t.app, { url: "/v1/me", token })).json();
    assert.equal(me.display_name, null);
    assert.notEqual(me.email, "evil@example.com");
  });

  test("a body over the size limit gives 413", async () => {
    const res = await call(t.app, {
      method: "PATCH",
      url: "/v1/me",
      token,
      body: { display_name: "x".repeat(1024 * 1024 + 10) },
    });
    expectError(res, 413, "payload_too_large");
  });

  test("a wrong content type gives 415 in the error body", async () => {
    const res = await t.app.inject({
      method: "PATCH",
      url: "/v1/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/xml" },
      payload: "<a/>",
    });
    expectError(res as never, 415, "unsupported_media_type");
  });

  test("every response carries a distinct x-request-id", async () => {
    const a = await call(t.app, { url: "/v1/edition" });
    const b = await call(t.app, { url: "/v1/nope" });
    assert.match(String(a.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.match(String(b.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.notEqual(a.headers["x-request-id"], b.headers["x-request-id"]);
  });
});
