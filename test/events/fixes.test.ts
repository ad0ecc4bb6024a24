import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, OPERATOR_TOKEN, signup, type TestApp } from "../helpers/app.js";
import { recordEvent } from "../../src/events/public.js";
import { eventsArea, RETENTION_JOB } from "../../src/events/module.js";
import type { RouteEntry } from "../../src/http/route-table.js";
import { inTransaction } from "../../src/store/db.js";
import { makeOrg, ORG } from "../orgs/lib.js";
import { startReceiver } from "./receiver.js";

/** Issue 31's fixes: partners and their children's events, organization roles on webhooks, retention, the streams mark. */
describe("events: partners, roles, retention", () => {
  let t: TestApp;
  const rx = startReceiver();
  before(async () => {
    t = await createTestApp({ startJobs: true, env: { WEBHOOK_SWEEP_MS: "300" } });
  });
  after(async () => {
    await (await rx).close();
    await t?.close();
  });
  const as = (token: string, method: string, url: string, body?: unknown, headers?: Record<string, string>) =>
    call(t.app, { method: method as "GET", url, token, body, headers });
  const types = async (token: string, query = "") =>
    (await as(token, "GET", `/v1/events${query}`)).json().items.map((e: any) => `${e.type}:${e.resource.id}`);
  const podEvent = (childId: string, pod: string) =>
    inTransaction(t.db, (tx) =>
      recordEvent(tx, {
        type: "pod.crash_loop",
        owner: { kind: "partner_child", id: childId },
        resource: { kind: "pod", id: pod },
      }),
    );

  test("a partner sees and receives its children's events (filterable by child); child events on create and delete", async () => {
    const receiver = await rx;
    const partner = await signup(t.app);
    const made = await as(OPERATOR_TOKEN, "PUT", `/v1/operator/partners/${partner.id}`, {});
    assert.equal(made.statusCode, 200, made.body);
    const child = async () => {
      const res = await as(partner.token, "POST", "/v1/partner/users", {
        external_ref: `ext-${randomUUID()}`,
        token: { scopes: ["pods:read"] },
      });
      assert.equal(res.statusCode, 201, res.body);
      return { id: res.json().id as string, token: res.json().token.key as string };
    };
    const a = await child();
    const b = await child();
    assert.deepEqual(await types(partner.token, "?type=partner.*"), [
      `partner.child.created:${b.id}`,
      `partner.child.created:${a.id}`,
    ]);

    // only children of the caller's can narrow an endpoint; only partners name children
    const plain = await signup(t.app);
    for (const [token, ids] of [
      [partner.token, [randomUUID()]],
      [plain.token, [a.id]],
    ] as const)
      expectError(
        await as(token, "POST", "/v1/webhook-endpoints", { url: receiver.url, event_types: ["*"], child_ids: ids }),
        400,
        "invalid_request",
      );
    const ep = await as(partner.token, "POST", "/v1/webhook-endpoints", {
      url: receiver.url,
      event_types: ["pod.*"],
      child_ids: [a.id],
    });
    assert.equal(ep.statusCode, 201, ep.body);
    assert.deepEqual(ep.json().child_ids, [a.id]);

    const ofB = await podEvent(b.id, "pod-b");
    const ofA = await podEvent(a.id, "pod-a");
    await receiver.until((r) => r.some((x) => x.event.id === ofA));
    assert.ok(!receiver.received.some((x) => x.event.id === ofB), "child b is not on this endpoint");
    assert.deepEqual(receiver.received.find((x) => x.event.id === ofA)!.event.owner, {
      kind: "partner_child",
      id: a.id,
    });

    // the partner lists both children's events, one child's with child_id; a child sees only its own
    assert.deepEqual((await types(partner.token, "?type=pod.*")).sort(), [
      "pod.crash_loop:pod-a",
      "pod.crash_loop:pod-b",
    ]);
    assert.deepEqual(await types(partner.token, `?child_id=${b.id}`), ["pod.crash_loop:pod-b"]);
    assert.equal((await as(partner.token, "GET", `/v1/events/${ofB}`)).statusCode, 200);
    expectError(await as(partner.token, "GET", `/v1/events?child_id=${randomUUID()}`), 404, "not_found");
    expectError(await as(plain.token, "GET", `/v1/events?child_id=${a.id}`), 404, "not_found");
    expectError(await as(a.token, "GET", `/v1/events`), 403, "scope_insufficient"); // its token lacks events:read
    assert.deepEqual(await types(plain.token), []);

    assert.equal((await as(partner.token, "DELETE", `/v1/partner/users/${b.id}`)).statusCode, 204);
    assert.deepEqual(await types(partner.token, "?type=partner.child.deleted"), [`partner.child.deleted:${b.id}`]);
  });

  test("an organization's webhook endpoints are for its admins and owner; members read its events", async () => {
    const receiver = await rx;
    const org = await makeOrg(t, { admins: 1, members: 1 });
    const [admin] = org.admins;
    const [member] = org.members;
    const body = { url: receiver.url, event_types: ["*"] };
    const created = await as(admin.token, "POST", "/v1/webhook-endpoints", body, ORG);
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id;
    for (const [method, url] of [
      ["POST", "/v1/webhook-endpoints"],
      ["GET", "/v1/webhook-endpoints"],
      ["GET", `/v1/webhook-endpoints/${id}`],
      ["PATCH", `/v1/webhook-endpoints/${id}`],
      ["DELETE", `/v1/webhook-endpoints/${id}`],
      ["GET", `/v1/webhook-endpoints/${id}/deliveries`],
    ])
      expectError(await as(member.token, method, url, method === "GET" ? undefined : body, ORG), 403, "forbidden_role");
    assert.equal((await as(org.owner.token, "GET", `/v1/webhook-endpoints/${id}`, undefined, ORG)).statusCode, 200);
    assert.equal((await as(member.token, "GET", "/v1/events", undefined, ORG)).statusCode, 200);
    // outside the company context the member manages its own
    assert.equal((await as(member.token, "POST", "/v1/webhook-endpoints", body)).statusCode, 201);
  });

  test("retention deletes events older than EVENT_RETENTION_DAYS with their deliveries", async () => {
    const receiver = await rx;
    const user = await signup(t.app);
    const ep = await as(user.token, "POST", "/v1/webhook-endpoints", { url: receiver.url, event_types: ["build.*"] });
    const emit = (id: string) =>
      inTransaction(t.db, (tx) =>
        recordEvent(tx, {
          type: "build.failed",
          owner: { kind: "account", id: user.id },
          resource: { kind: "build", id },
        }),
      );
    const old = await emit("old");
    const fresh = await emit("fresh");
    await receiver.until((r) => [old, fresh].every((id) => r.some((x) => x.event.id === id)));
    // as if written 31 days ago (the default keeps 30)
    await t.db.query("UPDATE events SET created_at = now() - interval '31 days' WHERE id = $1", [old]);
    const job = eventsArea.jobs!(t.platform, t.platform.state(eventsArea.name)).find((j) => j.name === RETENTION_JOB)!;
    await job.handler({}, { id: "test", retryCount: 0 });
    assert.deepEqual(await types(user.token), ["build.failed:fresh"]);
    expectError(await as(user.token, "GET", `/v1/events/${old}`), 404, "not_found");
    const log = (await as(user.token, "GET", `/v1/webhook-endpoints/${ep.json().id}/deliveries`)).json();
    assert.deepEqual(
      log.items.map((d: any) => d.event_id),
      [fresh],
    );
  });

  test("the event stream is marked as streaming in the route table and the document", async () => {
    const table: RouteEntry[] = (t.app as any).routeTable;
    assert.deepEqual(
      table.filter((r) => r.streams).map((r) => `${r.method} ${r.url}`),
      ["GET /v1/events/stream"],
    );
    const doc = (await call(t.app, { url: "/v1/openapi.json" })).json();
    const op = doc.paths["/v1/events/stream"].get;
    assert.equal(op["x-streams"], true);
    assert.ok(op.responses["200"].content["text/event-stream"]);
  });
});
