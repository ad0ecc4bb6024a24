import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { recordEvent } from "../../src/events/public.js";
import { accountOwner } from "../../src/kernel/owner.js";
import { inTransaction } from "../../src/store/db.js";

/** The outbox and GET /v1/events: what recordEvent commits is listed to its owner only, filtered and paged. */
describe("events list", () => {
  let t: TestApp;
  let a: { token: string; id: string };
  let b: { token: string; id: string };
  before(async () => {
    t = await createTestApp();
    a = await signup(t.app);
    b = await signup(t.app);
  });
  after(async () => t?.close());

  test("events commit with their change, list newest first with filters and a cursor, per owner", async () => {
    const owner = accountOwner(a.id);
    await inTransaction(t.db, async (tx) => {
      await recordEvent(tx, { type: "build.failed", owner, resource: { kind: "build", id: "b1" }, data: { n: 1 } });
      await recordEvent(tx, { type: "build.succeeded", owner, resource: { kind: "build", id: "b2" }, data: { n: 2 } });
    });
    // a rolled-back change leaves no event
    await assert.rejects(
      inTransaction(t.db, async (tx) => {
        await recordEvent(tx, { type: "database.failed", owner, resource: { kind: "database", id: "d" } });
        throw new Error("rolled back");
      }),
    );
    await inTransaction(t.db, (tx) =>
      recordEvent(tx, { type: "database.running", owner, resource: { kind: "database", id: "d1" }, data: { n: 3 } }),
    );
    const all = (await call(t.app, { url: "/v1/events", token: a.token })).json();
    assert.deepEqual(
      all.items.map((e: any) => e.type),
      ["database.running", "build.succeeded", "build.failed"],
    );
    assert.deepEqual(all.items[0].owner, { kind: "account", id: a.id });
    assert.deepEqual(all.items[0].resource, { kind: "database", id: "d1" });

    const builds = (await call(t.app, { url: "/v1/events?type=build.*", token: a.token })).json();
    assert.deepEqual(
      builds.items.map((e: any) => e.data.n),
      [2, 1],
    );
    const one = (await call(t.app, { url: "/v1/events?resource_kind=build&resource_id=b1", token: a.token })).json();
    assert.equal(one.items.length, 1);

    const p1 = (await call(t.app, { url: "/v1/events?limit=2", token: a.token })).json();
    assert.equal(p1.items.length, 2);
    const p2 = (await call(t.app, { url: `/v1/events?limit=2&cursor=${p1.next_cursor}`, token: a.token })).json();
    assert.deepEqual(
      p2.items.map((e: any) => e.type),
      ["build.failed"],
    );
    assert.equal(p2.next_cursor, null);

    const got = await call(t.app, { url: `/v1/events/${p2.items[0].id}`, token: a.token });
    assert.equal(got.json().type, "build.failed");

    // another owner sees none of them, and cannot page with them
    assert.deepEqual((await call(t.app, { url: "/v1/events", token: b.token })).json().items, []);
    expectError(await call(t.app, { url: `/v1/events/${p2.items[0].id}`, token: b.token }), 404, "not_found");
    expectError(await call(t.app, { url: `/v1/events?cursor=${p1.next_cursor}`, token: b.token }), 400, "bad_cursor");
    expectError(await call(t.app, { url: "/v1/events?type=nope", token: a.token }), 400, "bad_event_type");

    // a key needs events:read
    const key = await scopedKey(t.app, a.token, ["databases:read"]);
    expectError(await call(t.app, { url: "/v1/events", token: key }), 403, "scope_insufficient");
    const reader = await scopedKey(t.app, a.token, ["events:read"]);
    assert.equal((await call(t.app, { url: "/v1/events", token: reader })).statusCode, 200);
  });
});
