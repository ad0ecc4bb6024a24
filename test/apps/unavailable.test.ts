import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { createAppsTestApp } from "./lib.js";

let t: TestApp;
before(async () => {
  t = await createAppsTestApp({ env: { PODMAN_BIN: "/nonexistent/podman" } });
});
after(() => t.close());

test("without podman the pod endpoints answer 503 runtime_unavailable saying how to install it; the rest works", async () => {
  const user = await signup(t.app);
  const res = await call(t.app, {
    method: "POST",
    url: "/v1/pods",
    token: user.token,
    body: { name: "no-runtime", image: "localhost/x:1" },
  });
  expectError(res, 503, "runtime_unavailable");
  assert.match(res.json().error.message, /apt-get install/);
  assert.equal((await call(t.app, { url: "/v1/pods", token: user.token })).statusCode, 200);
  assert.equal((await call(t.app, { url: "/v1/databases", token: user.token })).statusCode, 200);
  assert.equal((await call(t.app, { url: "/v1/me", token: user.token })).statusCode, 200);
});
