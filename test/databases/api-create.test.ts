import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { connect, waitFor } from "./lib.js";

/**
 * The databases API on real PostgreSQL servers: creation (validation, one-time passwords, a server that accepts
 * the URL), addressing by id or slug and across accounts and scoped keys, soft deletion.
 * Lifecycle and settings have api-lifecycle.test.ts and api-settings.test.ts.
 */

describe("databases API: creation, addressing and deletion", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let dev: any;
  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
  });
  after(async () => {
    await t.close();
  });

  test("creation validates name, slug, size, version, retention and engine with the spec's codes", async () => {
    const post = (body: unknown) => call(t.app, { method: "POST", url: "/v1/databases", token: user.token, body });
    expectError(await post({ name: "ab" }), 400, "bad_slug");
    expectError(await post({ name: "Has_Upper" }), 400, "bad_slug");
    expectError(await post({ name: "okname", slug: "-bad-" }), 400, "bad_slug");
    expectError(await post({ name: "okname", size: "huge" }), 400, "bad_size");
    expectError(await post({ name: "okname", version: 15 }), 400, "bad_version");
    expectError(await post({ name: "okname", pitr_retention_days: 0 }), 400, "invalid_request");
    expectError(await post({ name: "okname", pitr_retention_days: 36 }), 400, "invalid_request");
    expectError(await post({ name: "okname", engine: "mysql" }), 400, "invalid_request");
    expectError(await post({ name: "okname", owner: "someone" }), 400, "invalid_request");
    assert.equal(
      (await call(t.app, { url: "/v1/databases", token: user.token })).json().length,
      0,
      "nothing was created",
    );
  });

  test("create gives 201 with one-time passwords; the server becomes running and accepts the URL", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "app-db" },
    });
    assert.equal(res.statusCode, 201);
    dev = res.json();
    assert.equal(dev.slug, "app-db");
    assert.equal(dev.version, 17);
    assert.equal(dev.size, "dev");
    assert.equal(dev.storage_gb, 10);
    assert.equal(dev.pitr_retention_days, 7);
    assert.equal(dev.state, "creating");
    assert.equal(dev.public_host, "app-db.db.localhost");
    assert.match(dev.internal_host, /^app-db\.db\./);
    assert.ok(dev.password && dev.superuser_password);
    assert.ok(dev.database_url.includes(encodeURIComponent(dev.password)));
    const running = await waitFor(t, user.token, dev.id, (d) => d.state === "running");
    assert.ok(!JSON.stringify(running).includes(dev.password), "GET never shows the password");
    const client = await connect(dev.database_url);
    await client.query("CREATE TABLE notes (id int primary key, body text)");
    await client.query("INSERT INTO notes VALUES (1, 'kept')");
    assert.equal((await client.query("SHOW ssl")).rows[0].ssl, "on");
    await client.end();
  });

  test("slug collisions give 409 slug_taken; another account gets 404 for the instance", async () => {
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/databases",
        token: user.token,
        body: { name: "other", slug: "app-db" },
      }),
      409,
      "slug_taken",
    );
    const stranger = await signup(t.app);
    expectError(await call(t.app, { url: `/v1/databases/${dev.id}`, token: stranger.token }), 404, "not_found");
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: stranger.token }),
      404,
      "not_found",
    );
    assert.equal(
      (await call(t.app, { url: "/v1/databases/app-db", token: user.token })).json().id,
      dev.id,
      "slug addresses it too",
    );
  });

  test("instance-limited keys: their instance only, no creation, lists narrowed, slug or id both match", async () => {
    const other = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "second-db" },
    });
    assert.equal(other.statusCode, 201);
    const bySlug = await scopedKey(t.app, user.token, ["databases:write:app-db"]);
    const byId = await scopedKey(t.app, user.token, [`databases:read:${dev.id}`]);
    assert.equal((await call(t.app, { url: `/v1/databases/${dev.id}`, token: bySlug })).statusCode, 200);
    assert.equal((await call(t.app, { url: "/v1/databases/app-db", token: byId })).statusCode, 200);
    expectError(await call(t.app, { url: "/v1/databases/second-db", token: bySlug }), 403, "scope_insufficient");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/databases", token: bySlug, body: { name: "third-db" } }),
      403,
      "scope_insufficient",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: byId }),
      403,
      "scope_insufficient",
    );
    const list = (await call(t.app, { url: "/v1/databases", token: bySlug })).json();
    assert.deepEqual(
      list.map((d: any) => d.slug),
      ["app-db"],
    );
    const all = (
      await call(t.app, { url: "/v1/databases", token: await scopedKey(t.app, user.token, ["databases:read"]) })
    ).json();
    assert.equal(all.length, 2);
  });

  test("delete is soft: the instance answers as removed by id, leaves the list, and its server stops", async () => {
    const res = await call(t.app, { method: "DELETE", url: `/v1/databases/${dev.id}`, token: user.token });
    assert.equal(res.statusCode, 202);
    const d = (await call(t.app, { url: `/v1/databases/${dev.id}`, token: user.token })).json();
    assert.equal(d.state, "removed");
    assert.ok(
      !(await call(t.app, { url: "/v1/databases", token: user.token })).json().some((x: any) => x.id === dev.id),
    );
    await waitFor(
      t,
      user.token,
      dev.id,
      (x) => x.commands.find((c: any) => c.id === res.json().command_id)?.status === "succeeded",
      30_000,
    );
    await assert.rejects(connect(dev.database_url));
  });
});
