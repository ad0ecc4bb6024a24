import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { fund, waitFor } from "../databases/lib.js";
import { enforceOverdue, OVERDUE_PAUSE_REASON } from "../../src/billing/metering/overdue.js";

describe("running out of money while resources run", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let db: any;
  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
    await fund(t, user.id, 100_000);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "paid-db", size: "basic" },
    });
    assert.equal(res.statusCode, 201);
    db = res.json();
    await waitFor(t, user.token, db.id, (d) => d.state === "running");
  });
  after(async () => {
    await t.close();
  });

  const markOverdue = (hoursAgo: number | null) =>
    t.db.query(
      "UPDATE ledger_wallets SET overdue_since = $2 WHERE owner_kind = 'account' AND owner_id = $1 AND currency = 'KRW'",
      [user.id, hoursAgo === null ? null : new Date(Date.now() - hoursAgo * 3600_000)],
    );

  test("default policy keeps an overdue account's databases running and blocks new paid creation", async () => {
    await markOverdue(48);
    const result = await enforceOverdue(t.platform, {
      action: t.config.overdueAction,
      graceHours: t.config.overdueGraceHours,
    });
    assert.equal(t.config.overdueAction, "keep");
    assert.deepEqual(result.paused, []);
    assert.equal((await call(t.app, { url: `/v1/databases/${db.id}`, token: user.token })).json().state, "running");
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/databases",
        token: user.token,
        body: { name: "more-paid", size: "basic" },
      }),
      402,
      "insufficient_funds",
    );
  });

  test("pause policy leaves accounts inside the grace period alone", async () => {
    await markOverdue(1);
    const result = await enforceOverdue(t.platform, { action: "pause", graceHours: 24 });
    assert.deepEqual(result.paused, []);
  });

  test("pause policy stops paid databases past the grace period and starts them once the account is settled", async () => {
    await markOverdue(48);
    const paused = await enforceOverdue(t.platform, { action: "pause", graceHours: 24 });
    assert.deepEqual(paused.paused, [db.id]);
    const stopped = await waitFor(t, user.token, db.id, (d) => d.state === "paused", 60_000);
    assert.equal(stopped.status_reason, OVERDUE_PAUSE_REASON);
    assert.deepEqual(
      (await enforceOverdue(t.platform, { action: "pause", graceHours: 24 })).paused,
      [],
      "acted on once",
    );

    await markOverdue(null);
    const resumed = await enforceOverdue(t.platform, { action: "pause", graceHours: 24 });
    assert.deepEqual(resumed.resumed, [db.id]);
    const running = await waitFor(t, user.token, db.id, (d) => d.state === "running", 60_000);
    assert.equal(running.status_reason, null);
  });
});
