import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { MAX_CONCURRENT_EXECS } from "../../src/sandboxes/service.js";
import { cleanupSandboxes, exec, hostId, post } from "./lib.js";

/**
 * Who may do what with sandboxes: scopes (read, write, instance-limited keys), other accounts, the
 * per-owner limit, and the 503 runtime_unavailable answers where podman is missing.
 */
describe("sandboxes: scopes, owners, limits and a missing runtime", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let other: { token: string; id: string };
  const del = (token: string, id: string) => call(t.app, { method: "DELETE", url: `/v1/sandboxes/${id}`, token });

  before(async () => {
    t = await createTestApp({ env: { SANDBOX_MAX_PER_OWNER: "2" } });
    user = await signup(t.app);
    other = await signup(t.app);
  });
  after(async () => {
    await cleanupSandboxes(t.db, hostId(t));
    await t.close();
  });

  test("scopes: read lists and reads; write creates, execs and deletes; instance keys reach only their sandbox", async () => {
    const a = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 120 })).json();
    const b = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 120 })).json();

    const reader = await scopedKey(t.app, user.token, ["sandboxes:read"]);
    assert.equal((await call(t.app, { url: "/v1/sandboxes", token: reader })).json().length, 2);
    assert.equal((await call(t.app, { url: `/v1/sandboxes/${a.id}`, token: reader })).statusCode, 200);
    expectError(await post(t, reader, "/v1/sandboxes"), 403, "scope_insufficient");
    expectError(await exec(t, reader, a.id, ["true"]), 403, "scope_insufficient");
    expectError(await del(reader, a.id), 403, "scope_insufficient");

    const databases = await scopedKey(t.app, user.token, ["databases:write"]);
    expectError(await call(t.app, { url: "/v1/sandboxes", token: databases }), 403, "scope_insufficient");

    const onlyA = await scopedKey(t.app, user.token, [`sandboxes:write:${a.id}`]);
    assert.equal((await exec(t, onlyA, a.id, ["echo", "mine"])).json().stdout, "mine\n");
    expectError(await exec(t, onlyA, b.id, ["true"]), 403, "scope_insufficient");
    expectError(await post(t, onlyA, "/v1/sandboxes"), 403, "scope_insufficient");
    const listed = (await call(t.app, { url: "/v1/sandboxes", token: onlyA })).json();
    assert.deepEqual(
      listed.map((s: { id: string }) => s.id),
      [a.id],
    );

    // another account sees none of them
    expectError(await call(t.app, { url: `/v1/sandboxes/${a.id}`, token: other.token }), 404, "not_found");
    expectError(await exec(t, other.token, a.id, ["true"]), 404, "not_found");
    expectError(await del(other.token, a.id), 404, "not_found");
    assert.deepEqual((await call(t.app, { url: "/v1/sandboxes", token: other.token })).json(), []);
    expectError(await call(t.app, { url: "/v1/sandboxes" }), 401, "auth_required");

    const writer = await scopedKey(t.app, user.token, ["sandboxes:write"]);
    assert.equal((await del(writer, a.id)).json().state, "removed");
    assert.equal((await del(onlyA, a.id)).statusCode, 200);
    await del(user.token, b.id);
  });

  test("an owner runs at most SANDBOX_MAX_PER_OWNER at once, a sandbox at most 8 commands at once", async () => {
    const one = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 60 })).json();
    const two = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 60 })).json();
    const refused = await post(t, user.token, "/v1/sandboxes", { timeout_s: 60 });
    expectError(refused, 503, "provision_failed");
    assert.match(refused.json().error.message, /At most 2 sandboxes/);
    // another owner has its own allowance
    const theirs = await post(t, other.token, "/v1/sandboxes", { timeout_s: 60 });
    assert.equal(theirs.statusCode, 201);
    await del(user.token, one.id);
    const three = await post(t, user.token, "/v1/sandboxes", { timeout_s: 60 });
    assert.equal(three.statusCode, 201);
    // and one sandbox runs at most MAX_CONCURRENT_EXECS commands at once
    const answers = await Promise.all(
      Array.from({ length: MAX_CONCURRENT_EXECS + 1 }, () => exec(t, user.token, two.id, ["sleep", "2"])),
    );
    const codes = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [...Array(MAX_CONCURRENT_EXECS).fill(200), 409]);
    assert.equal((await exec(t, user.token, two.id, ["true"])).statusCode, 200, "free again afterwards");
    for (const [token, id] of [
      [user.token, two.id],
      [user.token, three.json().id],
      [other.token, theirs.json().id],
    ])
      await del(token, id);
  });

  test("without podman, creation and exec answer 503 runtime_unavailable with the install command; reads still work", async () => {
    const sb = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 60 })).json();
    const missing = await createTestApp({ databaseUrl: t.url, env: { PODMAN_BIN: "/nonexistent/podman" } });
    try {
      const created = await post(missing, user.token, "/v1/sandboxes");
      expectError(created, 503, "runtime_unavailable");
      assert.match(created.json().error.message, /apt-get install podman runc/);
      // the sandbox lives on the first app's host, and this process cannot run containers anyway
      expectError(await exec(missing, user.token, sb.id, ["true"]), 503, "runtime_unavailable");
      const listed = await call(missing.app, { url: "/v1/sandboxes", token: user.token });
      assert.equal(listed.statusCode, 200);
      assert.ok(listed.json().some((s: { id: string }) => s.id === sb.id));
    } finally {
      await missing.close();
    }
    await del(user.token, sb.id);
  });
});
