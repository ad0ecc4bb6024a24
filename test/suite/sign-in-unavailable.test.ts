/**
 * The suite being down or absent never gives a 500: with the issuer unreachable the sign-in answers 503
 * suite_unavailable (and discovery is tried again on the next call); with no suite configured, 503
 * suite_not_configured, GET /v1/auth/suite says it is off, and the organization routes answer 404.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";

describe("suite sign-in without a reachable suite", () => {
  let down: TestApp;
  let off: TestApp;
  before(async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const { port } = s.address() as AddressInfo;
    await new Promise<void>((r) => s.close(() => r()));
    down = await createTestApp({
      env: { SUITE_ISSUER: `http://127.0.0.1:${port}`, SUITE_CLIENT_ID: "x", SUITE_CLIENT_SECRET: "y" },
    });
    off = await createTestApp();
  });
  after(async () => {
    await down?.close();
    await off?.close();
  });

  test("an unreachable suite answers 503 suite_unavailable, each time", async () => {
    for (let i = 0; i < 2; i++)
      expectError(await call(down.app, { url: "/v1/auth/suite/start" }), 503, "suite_unavailable");
    const info = await call(down.app, { url: "/v1/auth/suite" });
    assert.equal(info.json().enabled, true);
  });

  test("no suite configured: off, 503 suite_not_configured; the organization routes 404", async () => {
    assert.deepEqual((await call(off.app, { url: "/v1/auth/suite" })).json(), { enabled: false, issuer: null });
    expectError(await call(off.app, { url: "/v1/auth/suite/start" }), 503, "suite_not_configured");
    expectError(
      await call(off.app, { url: "/v1/auth/suite/callback?state=x&code=y", headers: { accept: "application/json" } }),
      503,
      "suite_not_configured",
    );
    const owner = await signup(off.app);
    await call(off.app, { method: "POST", url: "/v1/org", token: owner.token, body: { name: "Plain" } });
    expectError(await call(off.app, { url: "/v1/org/suite", token: owner.token }), 404, "not_found");
  });
});
