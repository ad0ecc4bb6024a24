import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { accountOwner } from "../../src/kernel/owner.js";
import { intervalStartOf, meterInterval } from "../../src/billing/metering/meter.js";
import { OVERDUE_PAUSE_REASON } from "../../src/billing/metering/overdue.js";
import { prices } from "../../src/billing/catalog.js";
import { call, expectError, OPERATOR_TOKEN, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { AppsState } from "../../src/apps/module.js";
import { createAppsTestApp, createPod, httpGet, waitPod } from "./lib.js";

const STEP = prices().meter_interval_seconds * 1000;
const MICRO_PER_HOUR = 12_000_000; // catalog/prices.json: resources.pod.micro, 12 KRW/h

/**
 * Paid pods and billing: admission, metering into usage, summary and burn rate, a stopped pod paying nothing,
 * and billing's overdue pause and resume (paid pods stop and start again, free ones keep running).
 */
describe("pods and billing", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let v1: string;
  before(async () => {
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp();
    user = await signup(t.app);
  });
  after(async () => {
    await t?.close(); // removes every container of its host
  });

  const get = (url: string) => call(t.app, { url, token: user.token });
  const usageTransactions = async () => (await get("/v1/billing/transactions?type=usage&limit=200")).json().items;
  const meter = (at: Date) => meterInterval(t.db, t.platform.kernel.metering, at);

  test("a paid pod needs funds, is metered, shows in usage, summary, burn rate; stopped it pays nothing", async () => {
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/pods",
        token: user.token,
        body: { name: "paid-web", image: v1, port: 8080, size: "micro" },
      }),
      402,
      "insufficient_funds",
    );
    const credit = await call(t.app, {
      method: "POST",
      url: `/v1/operator/accounts/${user.id}/credit`,
      token: OPERATOR_TOKEN,
      body: { amount: 1000, currency: "KRW", reason: "pods metering test" },
    });
    assert.equal(credit.statusCode, 201, credit.body);

    const paid = await createPod(t, user.token, { name: "paid-web", image: v1, port: 8080, size: "micro" });
    const free = await createPod(t, user.token, { name: "free-web", image: v1, port: 8080 });
    assert.equal(free.size, "nano");
    await waitPod(t, user.token, paid.id, (p) => p.state === "running");
    await waitPod(t, user.token, free.id, (p) => p.state === "running");

    const balance = (await get("/v1/billing/balance")).json();
    assert.equal(balance.burn_rate_microkrw_per_hour, MICRO_PER_HOUR, "only the micro pod burns");
    assert.equal(balance.burn_rate_krw_per_hour, 12);

    // one metered interval: 12 KRW/h for 5 minutes is 1 won
    const interval = intervalStartOf(new Date());
    const result = await meter(interval);
    assert.ok(result.records >= 1);
    const day = interval.toISOString().slice(0, 10);
    const daily = (await get(`/v1/billing/usage-daily?from=${day}&to=${day}`)).json();
    const pod = daily.days[0].kinds.find((k: any) => k.kind === "pod");
    assert.ok(pod, JSON.stringify(daily));
    assert.equal(pod.amount_microkrw, MICRO_PER_HOUR / 12);

    const s = (await get("/v1/bill/summary")).json();
    const kind = s.month_to_date.kinds.find((k: any) => k.kind === "pod");
    assert.ok(kind, JSON.stringify(s.month_to_date));
    assert.equal(kind.amount_microkrw, 1_000_000);
    assert.equal(s.projected_month.burn_rate_microkrw_per_hour, MICRO_PER_HOUR);
    const used = new Map(s.spend_caps.app.apps.map((a: any) => [a.id, a.used_krw]));
    assert.equal(used.get(paid.id), 1, JSON.stringify(s.spend_caps.app));
    assert.ok((used.get(free.id) ?? 0) === 0, "a free pod costs nothing");
    assert.equal(s.balance, 999);
    const charged = await usageTransactions();
    assert.deepEqual(
      charged.map((x: any) => x.amount),
      [-1],
    );

    // stopped: not billable any more, no burn, the next interval charges nothing
    assert.equal(
      (await call(t.app, { method: "POST", url: `/v1/pods/${paid.id}/stop`, token: user.token })).statusCode,
      202,
    );
    await waitPod(t, user.token, paid.id, (p) => p.state === "stopped");
    assert.equal((await get("/v1/billing/balance")).json().burn_rate_microkrw_per_hour, 0);
    await meter(new Date(interval.getTime() + STEP));
    await meter(new Date(interval.getTime() + 2 * STEP));
    assert.equal((await usageTransactions()).length, 1, "nothing charged while stopped");
    assert.equal((await get("/v1/billing/balance")).json().balance, 999);
    const { rows } = await t.db.query(
      "SELECT count(*)::int AS n FROM usage_records WHERE resource_id = $1 AND interval_start > $2",
      [paid.id, interval],
    );
    assert.equal(rows[0].n, 0, "no usage record for a stopped pod");
  });

  test("billing's overdue pause stops paid pods (free ones keep running); resume starts them again", async () => {
    const pods = (await get("/v1/pods")).json();
    const paid = pods.find((p: any) => p.name === "paid-web");
    const free = pods.find((p: any) => p.name === "free-web");
    assert.ok(paid && free, "the first test's pods");
    await call(t.app, { method: "POST", url: `/v1/pods/${paid.id}/start`, token: user.token });
    await waitPod(t, user.token, paid.id, (p) => p.state === "running");

    const owner = accountOwner(user.id);
    const paused = await t.platform.kernel.pauseOwner(t.db, owner, OVERDUE_PAUSE_REASON);
    assert.deepEqual(paused, [paid.id]);
    const stopped = await waitPod(t, user.token, paid.id, (p) => p.state === "stopped");
    assert.equal(stopped.state_reason, OVERDUE_PAUSE_REASON);
    assert.equal((await get("/v1/billing/balance")).json().burn_rate_microkrw_per_hour, 0);
    // the free pod was not touched
    const still = (await get(`/v1/pods/${free.id}`)).json();
    assert.equal(still.state, "running");
    assert.equal((await httpGet(`http://${still.address}/`)).body, "v1\n");
    // the user cannot start what billing holds
    const start = await call(t.app, { method: "POST", url: `/v1/pods/${paid.id}/start`, token: user.token });
    expectError(start, 409, "conflict");
    // another reason resumes nothing
    assert.deepEqual(await t.platform.kernel.resumeOwner(t.db, owner, "some other reason"), []);

    const resumed = await t.platform.kernel.resumeOwner(t.db, owner, OVERDUE_PAUSE_REASON);
    assert.deepEqual(resumed, [paid.id]);
    const back = await waitPod(t, user.token, paid.id, (p) => p.state === "running");
    assert.equal(back.state_reason, null);
    assert.equal((await httpGet(`http://${back.address}/`)).body, "v1\n");
    assert.equal((await get("/v1/billing/balance")).json().burn_rate_microkrw_per_hour, MICRO_PER_HOUR);
  });

  test("a pause while a reconcile of the pod is in flight is not overwritten by it", async () => {
    const pod = await createPod(t, user.token, { name: "paid-race", image: v1, port: 8080, size: "micro" });
    await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    // hold the next health check of this pod's container: a reconcile stands between reading the row and writing
    const worker = t.platform.state<AppsState>("apps").worker;
    const runtime = worker.deps.runtime;
    const health = runtime.health.bind(runtime);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inFlight = new Promise<void>((r) => (entered = r));
    runtime.health = async (name: string) => {
      if (name.includes(pod.id.replace(/-/g, "").slice(0, 16))) {
        entered();
        await held;
      }
      return health(name);
    };
    try {
      const reconcile = worker.reconcile(pod.id);
      await inFlight;
      const owner = accountOwner(user.id);
      assert.ok((await t.platform.kernel.pauseOwner(t.db, owner, OVERDUE_PAUSE_REASON)).includes(pod.id));
      release();
      await reconcile;
    } finally {
      runtime.health = health;
    }
    const stopped = await waitPod(t, user.token, pod.id, (p) => p.state === "stopped", 5000);
    assert.equal(stopped.state_reason, OVERDUE_PAUSE_REASON);
    await t.platform.kernel.resumeOwner(t.db, accountOwner(user.id), OVERDUE_PAUSE_REASON);
    await waitPod(t, user.token, pod.id, (p) => p.state === "running");
  });
});
