import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { sleep } from "./lib.js";

/**
 * GET /v1/databases is served from a per-owner cache (kernel/change-feed.ts). These tests check it is
 * never stale: the caller's own writes, and writes by another process straight into the store, show
 * in the next list (the latter within NOTIFY's delivery).
 */
describe("database list cache keeps read-your-writes", () => {
  let a: TestApp;
  let b: TestApp;
  let user: { token: string; id: string };
  before(async () => {
    a = await createTestApp();
    b = await createTestApp({ databaseUrl: a.url }); // a second API process over the same store
    user = await signup(a.app);
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const list = async (t: TestApp) => (await call(t.app, { url: "/v1/databases", token: user.token })).json() as any[];

  test("a create, a rename and a delete through one process show in its next list and, within a moment, in the other's", async () => {
    assert.deepEqual(await list(a), []);
    assert.deepEqual(await list(b), []); // both have cached the empty list now
    const created = await call(a.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "cached-one" },
    });
    assert.equal(created.statusCode, 201);
    const id = created.json().id;
    assert.deepEqual(
      (await list(a)).map((d) => d.id),
      [id],
      "own write: at once",
    );
    let seen: any[] = [];
    for (let i = 0; i < 50 && seen.length === 0; i++) {
      seen = await list(b);
      if (!seen.length) await sleep(20);
    }
    assert.deepEqual(
      seen.map((d) => d.id),
      [id],
      "other process: after NOTIFY",
    );

    const renamed = await call(b.app, {
      method: "PATCH",
      url: `/v1/databases/${id}/rename`,
      token: user.token,
      body: { label: "new label" },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((await list(b))[0].label, "new label");
    let label = null;
    for (let i = 0; i < 50 && label !== "new label"; i++) {
      label = (await list(a))[0].label;
      if (label !== "new label") await sleep(20);
    }
    assert.equal(label, "new label");

    assert.equal(
      (await call(a.app, { method: "DELETE", url: `/v1/databases/${id}`, token: user.token })).statusCode,
      202,
    );
    assert.deepEqual(await list(a), []);
  });

  test("a change written by a worker straight into the store reaches the cached list", async () => {
    const created = await call(a.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "cached-two" },
    });
    const id = created.json().id;
    assert.equal((await list(a)).find((d) => d.id === id)?.state, "creating");
    await a.db.query("UPDATE databases SET state = 'running' WHERE id = $1", [id]);
    let state = "creating";
    for (let i = 0; i < 50 && state !== "running"; i++) {
      state = (await list(a)).find((d) => d.id === id)?.state;
      if (state !== "running") await sleep(20);
    }
    assert.equal(state, "running");
  });

  test("another owner never sees the cached list of the first", async () => {
    const other = await signup(a.app);
    assert.deepEqual((await call(a.app, { url: "/v1/databases", token: other.token })).json(), []);
  });
});
