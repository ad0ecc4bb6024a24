/**
 * Usage reports (src/suite/billing/reports.ts): per member and finished hour, whole KRW with the fraction carried to
 * the member's next hour, sent once with the key (org, member, hour), retried with the same key after a failure,
 * and posted in the ledger so the organization's suite wallet returns to zero.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { reportUsage, sendReports, writeReports } from "../../src/suite/billing/reports.js";
import { linkOf } from "../../src/suite/billing/repo.js";
import { HOUR, makeSuiteOrg, reportDeps, startFakeSuite, suiteEnv, type FakeSuite } from "./billing-lib.js";
import {
  asset,
  DB_MICRO_PER_INTERVAL,
  ledgerOf,
  meterAt,
  POD_MICRO_PER_INTERVAL,
  reportRows,
} from "./billing-usage.js";

let t: TestApp;
let suite: FakeSuite;

before(async () => {
  suite = await startFakeSuite();
  t = await createTestApp({ env: suiteEnv(suite) });
});
after(async () => {
  await t?.close();
  await suite?.close();
});

const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / HOUR) * HOUR);

describe("suite usage reports", () => {
  test("per member and hour, once, the fraction carried; the wallet back to zero", async () => {
    const org = await makeSuiteOrg(t, suite, { members: 2 });
    const [a, b] = org.members;
    const h1 = new Date(hourOf(new Date()).getTime() - 4 * HOUR);
    const h2 = new Date(h1.getTime() + HOUR);
    const dbA = asset(org.id, a.id, "database");
    const podB = asset(org.id, b.id, "pod");
    await meterAt(t, h1, [dbA, podB]);
    await meterAt(t, new Date(h1.getTime() + 5 * 60_000), [podB]);
    await meterAt(t, h2, [dbA]);

    const first = await reportUsage(reportDeps(t));
    assert.equal(first.reported, 3);
    const rows = await reportRows(t, org.id);
    const view = rows.map((r) => [
      r.account_id,
      r.hour.getTime(),
      r.usage_micro,
      r.carry_in_micro,
      r.amount_krw,
      r.carry_out_micro,
      r.status,
    ]);
    assert.deepEqual(
      view,
      [
        [a.id, h1.getTime(), DB_MICRO_PER_INTERVAL, 0, 3, 750_000, "reported"],
        [b.id, h1.getTime(), 2 * POD_MICRO_PER_INTERVAL, 0, 2, 0, "reported"],
        [a.id, h2.getTime(), DB_MICRO_PER_INTERVAL, 750_000, 4, 500_000, "reported"],
      ].sort((x, y) => (x[1] as number) - (y[1] as number) || String(x[0]).localeCompare(String(y[0]))),
    );
    // the suite holds one record per member-hour, in each member's account, under the hosting category
    const records = [...suite.billing.records.values()].filter((r) => r.companyId === org.companyId);
    assert.equal(records.length, 3);
    for (const r of rows) {
      const rec = suite.billing.records.get(r.idempotency_key)!;
      assert.equal(rec.quantity, r.amount_krw);
      assert.equal(rec.userId, org.subject.get(r.account_id));
      assert.equal(rec.hour, r.hour.toISOString());
      assert.equal(rec.category, "hosting");
      assert.equal(rec.unit, "KRW");
      assert.equal(r.idempotency_key, `suite-usage:${org.id}:${r.account_id}:${r.hour.toISOString()}`);
    }
    assert.equal(suite.billing.allowance(org.companyId, org.subject.get(a.id)!)!.used, 7);
    // metering charged 3.75 + 2 = 5 (0.75 carried), then 3.75 + 0.75 = 4.5 -> 4: 9 KRW; the suite paid back 9
    assert.deepEqual(await ledgerOf(t, org.id), { balance: 0, credited: 9, credits: 3 });

    // again: nothing new is written or sent
    const posts = suite.billing.posts.length;
    const again = await reportUsage(reportDeps(t));
    assert.deepEqual([again.hours, again.reported], [0, 0]);
    assert.equal(suite.billing.posts.length, posts);
  });

  test("a failed send stays pending and is retried with the same key", async () => {
    const org = await makeSuiteOrg(t, suite, { members: 1 });
    const [m] = org.members;
    const h = new Date(hourOf(new Date()).getTime() - 3 * HOUR);
    await meterAt(t, h, [asset(org.id, m.id, "pod"), asset(org.id, m.id, "pod")]);
    const link = (await linkOf(t.db, org.id))!;
    assert.ok((await writeReports(t.db, link)) >= 3);
    suite.billing.failNext(1);
    assert.deepEqual(await sendReports(reportDeps(t), org.id), { reported: 0, failed: 1 });
    let [row] = await reportRows(t, org.id);
    assert.deepEqual([row.status, row.attempts, row.amount_krw], ["pending", 1, 2]);
    assert.match(row.last_error!, /503/);
    // not before its back-off
    assert.deepEqual(await sendReports(reportDeps(t), org.id), { reported: 0, failed: 0 });
    await t.db.query("UPDATE suite_usage_reports SET next_attempt_at = now() WHERE org_id = $1", [org.id]);
    assert.deepEqual(await sendReports(reportDeps(t), org.id), { reported: 1, failed: 0 });
    [row] = await reportRows(t, org.id);
    assert.equal(row.status, "reported");
    assert.equal(suite.billing.records.get(row.idempotency_key)!.quantity, 2);
    assert.deepEqual(await ledgerOf(t, org.id), { balance: 0, credited: 2, credits: 1 });
  });
});
