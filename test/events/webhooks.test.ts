import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { contextTarGz, createBuildsTestApp, ended, startBuild, waitBuild } from "../builds/lib.js";
import { recordEvent } from "../../src/events/public.js";
import { accountOwner } from "../../src/kernel/owner.js";
import { inTransaction } from "../../src/store/db.js";
import { startReceiver, verify } from "./receiver.js";

/** Webhooks through HTTP: signed deliveries a receiver verifies with node:crypto, retries with the same event id, the log. */
describe("webhooks", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  const receivers: { close: () => Promise<void> }[] = [];
  before(async () => {
    t = await createBuildsTestApp({ env: { WEBHOOK_RETRY_BASE_SECONDS: "1", WEBHOOK_SWEEP_MS: "300" } });
    user = await signup(t.app);
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await t?.close();
  });
  const post = (url: string, body?: unknown) => call(t.app, { method: "POST", url, token: user.token, body });
  const get = (url: string) => call(t.app, { url, token: user.token });
  async function endpoint(url: string, event_types: string[]) {
    const res = await post("/v1/webhook-endpoints", { url, event_types });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; secret: string };
  }

  test("destinations on private, link-local or metadata addresses are refused; filters must name types", async () => {
    for (const url of [
      "http://10.1.2.3/hook",
      "http://169.254.169.254/latest",
      "http://[fd00::1]/x",
      "http://192.168.1.5/",
    ])
      expectError(await post("/v1/webhook-endpoints", { url, event_types: ["*"] }), 400, "destination_forbidden");
    expectError(await post("/v1/webhook-endpoints", { url: "ftp://example.com/", event_types: ["*"] }), 400);
    expectError(
      await post("/v1/webhook-endpoints", { url: "http://127.0.0.1:9/", event_types: ["nope.*"] }),
      400,
      "bad_event_type",
    );
  });

  test("a build failure reaches a receiver within seconds, signed with the secret shown once", async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const ep = await endpoint(rx.url, ["build.*"]);
    assert.match(ep.secret, /^whsec_/);
    assert.equal((await get(`/v1/webhook-endpoints/${ep.id}`)).json().secret, undefined);
    const archive = contextTarGz({ Dockerfile: "FROM $NO_SUCH_ARG\n" });
    const build = await startBuild(t, user.token, archive);
    const failedAt = Date.now();
    await waitBuild(t, user.token, build.id, ended, 30_000);
    await rx.until((r) => r.some((x) => x.event.resource.id === build.id), 10_000);
    const r = rx.received.find((x) => x.event.resource.id === build.id)!;
    assert.ok(r.at - failedAt < 10_000);
    assert.equal(r.event.type, "build.failed");
    assert.equal(r.headers["platform-event-id"], r.event.id);
    assert.ok(verify(ep.secret, String(r.headers["platform-signature"]), r.body), "signature verifies");
    assert.ok(!verify("whsec_wrong", String(r.headers["platform-signature"]), r.body));
    // the event is in the list too
    const listed = (await get(`/v1/events?resource_id=${build.id}`)).json();
    assert.equal(listed.items[0].id, r.event.id);
  });

  test("a receiver answering 500 then 200 gets the same event id again; the log shows both; manual redelivery", async () => {
    const rx = await startReceiver((_r, n) => (n === 1 ? 500 : 200));
    receivers.push(rx);
    const ep = await endpoint(rx.url, ["database.*"]);
    await inTransaction(t.db, (tx) =>
      recordEvent(tx, {
        type: "database.backup_failed",
        owner: accountOwner(user.id),
        resource: { kind: "database", id: "db-1" },
        data: { reason: "disk full" },
      }),
    );
    await rx.until((r) => r.length >= 2, 15_000);
    const [first, second] = rx.received;
    assert.equal(first.event.id, second.event.id);
    assert.equal(second.headers["platform-delivery-attempt"], "2");
    assert.ok(verify(ep.secret, String(second.headers["platform-signature"]), second.body));

    let log: any;
    for (let i = 0; i < 50; i++) {
      log = (await get(`/v1/webhook-endpoints/${ep.id}/deliveries`)).json();
      if (log.items[0]?.state === "succeeded") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(log.items.length, 1);
    const d = log.items[0];
    assert.equal(d.state, "succeeded");
    assert.equal(d.attempts, 2);
    assert.equal(d.event_id, first.event.id);
    const detail = (await get(`/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}`)).json();
    assert.deepEqual(
      detail.attempts.map((a: any) => a.status),
      [500, 200],
    );
    assert.equal(detail.attempts[0].answer_excerpt, "status 500");
    assert.ok(detail.attempts.every((a: any) => typeof a.latency_ms === "number"));

    // manual redelivery: one more attempt, same event id
    const again = await post(`/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}/redeliver`);
    assert.equal(again.statusCode, 202, again.body);
    await rx.until((r) => r.length >= 3);
    assert.equal(rx.received[2].event.id, first.event.id);

    // roll the secret keeping the old one an hour: both sign
    const rolled = await post(`/v1/webhook-endpoints/${ep.id}/roll-secret`, { previous_valid_seconds: 3600 });
    assert.equal(rolled.statusCode, 200, rolled.body);
    const fresh = rolled.json().secret;
    assert.notEqual(fresh, ep.secret);
    await post(`/v1/webhook-endpoints/${ep.id}/deliveries/${d.id}/redeliver`);
    await rx.until((r) => r.length >= 4);
    const sig = String(rx.received[3].headers["platform-signature"]);
    assert.ok(verify(fresh, sig, rx.received[3].body) && verify(ep.secret, sig, rx.received[3].body));

    // disable: nothing more is sent; list, patch, delete
    const off = await call(t.app, {
      method: "PATCH",
      url: `/v1/webhook-endpoints/${ep.id}`,
      token: user.token,
      body: { enabled: false },
    });
    assert.equal(off.json().enabled, false);
    assert.equal((await get("/v1/webhook-endpoints")).json().items.length >= 1, true);
    const del = await call(t.app, { method: "DELETE", url: `/v1/webhook-endpoints/${ep.id}`, token: user.token });
    assert.equal(del.statusCode, 200);
    expectError(await get(`/v1/webhook-endpoints/${ep.id}`), 404, "not_found");
  });

  test("another owner sees nothing of an endpoint", async () => {
    const other = await signup(t.app);
    const rx = await startReceiver();
    receivers.push(rx);
    const ep = await endpoint(rx.url, ["*"]);
    expectError(await call(t.app, { url: `/v1/webhook-endpoints/${ep.id}`, token: other.token }), 404, "not_found");
    expectError(
      await call(t.app, { url: `/v1/webhook-endpoints/${ep.id}/deliveries`, token: other.token }),
      404,
      "not_found",
    );
  });
});
