import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, type TestApp } from "../helpers/app.js";

describe("meta", () => {
  let t: TestApp;
  before(async () => { t = await createTestApp(); });
  after(async () => { await t.close(); });

  test("GET /v1/edition is public and names edition, base domain and login method", async () => {
    const res = await call(t.app, { url: "/v1/edition" });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { edition: "saas", base_domain: "localhost", login_method: "password" });
  });
});
