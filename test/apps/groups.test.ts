import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp } from "./lib.js";
import type { AppsState } from "../../src/apps/module.js";
import { intervalStartOf, meterInterval } from "../../src/billing/metering/meter.js";

/**
 * Pod groups on real containers, through HTTP: members made through the pods service, instance-limited
 * keys (a group id covers its members), the autoscaler growing under CPU load within replica_max and
 * shrinking back to replica_min, spend caps holding growth while running replicas stay, and admission.
 */
const TICK_MS = 700;

async function waitFor<T>(what: string, fn: () => Promise<T | null | false | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe("pod groups", () => {
  let t: TestApp;
  let image: string;
  let apps: AppsState;

  before(async () => {
    image = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp({
      env: {
        APPS_DRAIN_MS: "0",
        APPS_AUTOSCALE_MS: String(TICK_MS),
        APPS_AUTOSCALE_COOLDOWN_MS: "1500",
      },
    });
    apps = t.platform.state<AppsState>("apps");
    assert.equal(await apps.runtime.unavailable(), null, "podman runs on this host");
  });

  after(async () => {
    if (!t) return;
    const host = t.platform.kernel.require("hosts").local.id;
    const { rows: nets } = await t.db.query<{ name: string }>("SELECT name FROM owner_networks");
    await t.close();
    // whatever a failed test left: every container of this app's host, then its owners' networks
    for (const c of await apps.runtime.list({ "platform.host": host })) {
      await apps.runtime.stop(c.name, 0).catch(() => {});
      await apps.runtime.remove(c.name).catch(() => {});
    }
    for (const n of nets) await apps.runtime.removeNetwork(n.name).catch(() => {});
  });

  const api = (token: string, method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", url: string, body?: unknown) =>
    call(t.app, { method, url, token, body });
  const group = async (token: string, ref: string) => {
    const res = await api(token, "GET", `/v1/pod-groups/${ref}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const running = (g: { replicas: { state: string }[] }) => g.replicas.filter((r) => r.state === "running").length;
  /** a member burns its whole CPU allotment for `seconds` (a background loop that outlives the exec) */
  const burn = async (token: string, podId: string, seconds: number) => {
    const res = await api(token, "POST", `/v1/pods/${podId}/exec`, {
      command: ["sh", "-c", `timeout ${seconds} sh -c 'while :; do :; done' >/dev/null 2>&1 &`],
      timeout_s: 10,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().exit_code, 0);
  };

  test("create starts replica_min members; a group key sees exactly the group and its members", async () => {
    const u = await signup(t.app);
    const res = await api(u.token, "POST", "/v1/pod-groups", {
      name: "web",
      image,
      port: 8080,
      replica_min: 2,
      replica_max: 3,
      target_cpu_percent: 10,
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.equal(created.replicas.length, 2);
    assert.equal(created.desired_replicas, 2);
    assert.equal(created.size, "nano");
    assert.equal(created.scale_hold, null);
    assert.match(created.url, new RegExp(`^http://${created.slug}\\.`));
    const g = await waitFor("both members running", async () => {
      const cur = await group(u.token, created.id);
      return running(cur) === 2 && cur;
    });
    assert.equal(g.state, "running");
    for (const r of g.replicas) assert.equal(await (await fetch(`http://${r.address}/`)).text(), "v1\n");

    // pods and groups share <slug>.<APPS_DOMAIN>: a pod cannot take the group's slug
    const clash = await api(u.token, "POST", "/v1/pods", { name: "clash", slug: g.slug, image, port: 8080 });
    assert.equal(clash.statusCode, 409, clash.body);
    assert.equal(clash.json().error.code, "slug_taken");

    // a plain pod beside it, which the group's key must not see
    const solo = await api(u.token, "POST", "/v1/pods", { name: "solo", image, port: 8080 });
    assert.equal(solo.statusCode, 201, solo.body);
    const pods = (await api(u.token, "GET", "/v1/pods")).json();
    assert.equal(pods.length, 3);
    assert.equal(pods.filter((p: { group_id: string }) => p.group_id === g.id).length, 2);

    const key = await scopedKey(t.app, u.token, [`pods:read:${g.id}`]);
    const listed = (await api(key, "GET", "/v1/pod-groups")).json();
    assert.deepEqual(
      listed.map((x: { id: string }) => x.id),
      [g.id],
    );
    assert.equal((await api(key, "GET", `/v1/pod-groups/${g.slug}`)).statusCode, 200);
    const seen = (await api(key, "GET", "/v1/pods")).json();
    assert.deepEqual(seen.map((p: { id: string }) => p.id).sort(), g.replicas.map((r: { id: string }) => r.id).sort());
    for (const r of g.replicas) assert.equal((await api(key, "GET", `/v1/pods/${r.id}`)).statusCode, 200);
    expectError(await api(key, "GET", `/v1/pods/${solo.json().id}`), 403, "scope_insufficient");
    expectError(await api(key, "POST", `/v1/pods/${g.replicas[0].id}/exec`, { command: ["true"] }), 403);
    expectError(await api(key, "DELETE", `/v1/pod-groups/${g.id}`), 403, "scope_insufficient");
    expectError(await api(key, "POST", "/v1/pod-groups", { name: "x", image, replica_min: 1, replica_max: 1 }), 403);
    const writer = await scopedKey(t.app, u.token, [`pods:write:${g.id}`]);
    assert.equal(
      (await api(writer, "POST", `/v1/pods/${g.replicas[0].id}/exec`, { command: ["true"] })).statusCode,
      200,
    );
    const other = await scopedKey(t.app, u.token, [`pods:read:${solo.json().id}`]);
    expectError(await api(other, "GET", `/v1/pod-groups/${g.id}`), 403, "scope_insufficient");
    assert.deepEqual((await api(other, "GET", "/v1/pod-groups")).json(), []);

    // bounds are checked; a PATCH of the bounds keeps the members within them
    expectError(await api(u.token, "PATCH", `/v1/pod-groups/${g.id}`, { replica_min: 3, replica_max: 2 }), 400);
    expectError(
      await api(u.token, "POST", "/v1/pod-groups", { name: "bad", image, replica_min: 0, replica_max: 2 }),
      400,
    );

    // under load the autoscaler grows the group one member at a time, never past replica_max
    await burn(u.token, g.replicas[0].id, 12);
    const grown = await waitFor("the group to grow to replica_max", async () => {
      const cur = await group(u.token, g.id);
      return cur.desired_replicas === 3 && running(cur) === 3 && cur;
    });
    assert.equal(grown.replicas.length, 3);
    await new Promise((r) => setTimeout(r, 3 * TICK_MS));
    const bounded = await group(u.token, g.id);
    assert.equal(bounded.desired_replicas, 3, "replica_max bounds growth");
    assert.equal(bounded.replicas.length, 3);
    // the load ends: after the cooldown it shrinks back to replica_min, not below
    await waitFor(
      "the group to shrink to replica_min",
      async () => {
        const cur = await group(u.token, g.id);
        return cur.desired_replicas === 2 && cur.replicas.length === 2;
      },
      30_000,
    );
    const audit = (await api(u.token, "GET", "/v1/me/audit?limit=100")).json();
    assert.ok(
      audit.items.some(
        (a: { action: string; ip: string }) => a.action === "autoscalePodGroup" && a.ip === "autoscaler",
      ),
      "the autoscaler's steps are audited as its own",
    );

    // a member removed on its own is replaced
    const before = await group(u.token, g.id);
    assert.equal((await api(u.token, "DELETE", `/v1/pods/${before.replicas[0].id}`)).statusCode, 202);
    await waitFor("a replacement member", async () => {
      const cur = await group(u.token, g.id);
      return running(cur) === 2 && !cur.replicas.some((r: { id: string }) => r.id === before.replicas[0].id);
    });

    // the group's spec rolls every member; DELETE removes the members
    const patched = await api(u.token, "PATCH", `/v1/pod-groups/${g.id}`, { env: { GREETING: "hi" }, replica_max: 2 });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json().env, { GREETING: "hi" });
    // issue 29: the members roll a batch at a time (src/apps/rollout/groups.ts), no longer all within the PATCH
    await waitFor("every member on the new spec", async () => {
      const members = (await api(u.token, "GET", "/v1/pods")).json().filter((p: { group_id: string }) => p.group_id);
      return members.every((p: { env: object; generation: number }) => p.generation > 1 && "GREETING" in p.env);
    });
    const del = await api(u.token, "DELETE", `/v1/pod-groups/${g.id}`);
    assert.equal(del.statusCode, 202, del.body);
    assert.equal(del.json().state, "removed");
    assert.deepEqual(
      (await api(u.token, "GET", "/v1/pods")).json().map((p: { id: string }) => p.id),
      [solo.json().id],
    );
    assert.deepEqual((await api(u.token, "GET", "/v1/pod-groups")).json(), []);
    await waitFor("the members' containers to go", async () => {
      const left = await Promise.all(
        g.replicas.map((r: { id: string }) => apps.runtime.list({ "platform.pod": r.id })),
      );
      return left.every((cs) => cs.length === 0);
    });
    await api(u.token, "DELETE", `/v1/pods/${solo.json().id}`);
  });

  test("a paid size without balance is 402 insufficient_funds and leaves nothing behind", async () => {
    const u = await signup(t.app);
    const body = { name: "paid", image, port: 8080, size: "micro", replica_min: 1, replica_max: 2 };
    expectError(await api(u.token, "POST", "/v1/pod-groups", body), 402, "insufficient_funds");
    assert.deepEqual((await api(u.token, "GET", "/v1/pod-groups")).json(), []);
    assert.deepEqual((await api(u.token, "GET", "/v1/pods")).json(), []);
  });

  test("spend caps stop growth: the group holds with scale_hold, its replicas keep running", async () => {
    const u = await signup(t.app);
    const credit = await call(t.app, {
      method: "POST",
      url: `/v1/operator/accounts/${u.id}/credit`,
      token: OPERATOR_TOKEN,
      body: { amount: 1000, currency: "KRW", reason: "test" },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    const res = await api(u.token, "POST", "/v1/pod-groups", {
      name: "capped",
      image,
      port: 8080,
      size: "micro",
      replica_min: 1,
      replica_max: 2,
      target_cpu_percent: 10,
    });
    assert.equal(res.statusCode, 201, res.body);
    const g = res.json();
    await waitFor("the member running", async () => running(await group(u.token, g.id)) === 1);
    // one metered interval of the micro member: 1 KRW this month, for the account and for the group
    await meterInterval(t.db, t.platform.kernel.metering, intervalStartOf(new Date()));
    const caps = (account: number, app: number) =>
      Promise.all([
        api(u.token, "PUT", "/v1/me/account-spend-cap", { amount_krw: account }),
        api(u.token, "PUT", "/v1/me/app-spend-cap", { amount_krw: app }),
      ]);
    await caps(1, 1);
    await burn(u.token, g.replicas[0].id, 30);

    const held = await waitFor("the account cap to hold the group", async () => {
      const cur = await group(u.token, g.id);
      return /^spend_cap_reached: The account spend cap/.test(cur.scale_hold ?? "") && cur;
    });
    assert.equal(held.desired_replicas, 1);
    assert.equal(running(held), 1, "the running replica stays");
    await new Promise((r) => setTimeout(r, 3 * TICK_MS));
    const still = await group(u.token, g.id);
    assert.equal(still.desired_replicas, 1, "no growth at the cap");
    assert.equal(running(still), 1);

    // the account cap raised: the app cap (the group's own spend) holds it now
    await caps(1_000_000, 1);
    await waitFor("the app cap to hold the group", async () =>
      /^spend_cap_reached: The app spend cap/.test((await group(u.token, g.id)).scale_hold ?? ""),
    );
    assert.equal((await group(u.token, g.id)).desired_replicas, 1);

    // both raised: growth is admitted again and the hold clears
    await caps(1_000_000, 100_000);
    const grown = await waitFor("growth once admitted", async () => {
      const cur = await group(u.token, g.id);
      return cur.desired_replicas === 2 && cur;
    });
    assert.equal(grown.scale_hold, null);
    assert.equal((await api(u.token, "DELETE", `/v1/pod-groups/${g.id}`)).statusCode, 202);
  });
});
