/**
 * A kill -9 during usage reporting (src/suite/billing/reports.ts): a reporting process is killed right after each of
 * its steps in turn (rows written; a record sent but not marked; a row marked), then a rerun finishes. Each
 * member-hour is reported exactly once at the suite (one key each, the one amount the row holds; the record sent
 * before the kill comes back as a duplicate), every row ends reported and the ledger credits each once.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { reportUsage } from "../../src/suite/billing/reports.js";
import { HOUR, makeSuiteOrg, reportDeps, startFakeSuite, suiteEnv, type FakeSuite } from "./billing-lib.js";
import { asset, ledgerOf, meterAt, reportRows } from "./billing-usage.js";

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

/** Runs the worker until it kills itself after `killAt` (or finishes); returns its exit signal. */
async function runWorker(killAt: string | null): Promise<NodeJS.Signals | null> {
  const worker = spawn(process.execPath, ["--import", "tsx", "test/suite/billing-report-worker.ts"], {
    env: {
      PATH: process.env.PATH!,
      DATABASE_URL: t.url,
      SUITE_URL: suite.url,
      SUITE_TOKEN: suite.token,
      ...(killAt ? { KILL_AT: killAt } : {}),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  worker.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    worker.on("exit", (c, s) => resolve([c, s])),
  );
  assert.ok(signal === "SIGKILL" || code === 0, `worker exited ${code} ${signal}: ${stderr}`);
  return signal;
}

describe("suite usage reporting across kill -9", () => {
  test("each member-hour is reported once whichever step the process dies after", async () => {
    const h1 = new Date(Math.floor(Date.now() / HOUR) * HOUR - 4 * HOUR);
    // linked in the first hour with usage: the first write is that hour's rows
    const org = await makeSuiteOrg(t, suite, { members: 2, linkedAgoMs: Date.now() - h1.getTime() - 60_000 });
    const [a, b] = org.members;
    const h2 = new Date(h1.getTime() + HOUR);
    await meterAt(t, h1, [asset(org.id, a.id, "database"), asset(org.id, b.id, "pod")]);
    await meterAt(t, h2, [asset(org.id, a.id, "database"), asset(org.id, b.id, "pod")]);

    // killed after the first hour's rows commit: the cursor has moved one hour, nothing is sent
    assert.equal(await runWorker("write"), "SIGKILL");
    assert.equal(suite.billing.posts.length, 0);
    assert.equal((await reportRows(t, org.id)).length, 2);
    // killed after the suite took the first record, before the row is marked
    assert.equal(await runWorker("send"), "SIGKILL");
    assert.equal(suite.billing.posts.length, 1);
    const sentFirst = suite.billing.posts[0].key;
    assert.equal((await reportRows(t, org.id)).find((r) => r.idempotency_key === sentFirst)!.status, "pending");
    // killed right after a row is marked: the first record sent again answers duplicate
    assert.equal(await runWorker("mark"), "SIGKILL");
    assert.deepEqual(suite.billing.posts[1], { key: sentFirst, duplicate: true });
    // the rerun, in this process, finishes the rest
    await reportUsage(reportDeps(t));

    const rows = await reportRows(t, org.id);
    assert.equal(rows.length, 4);
    assert.ok(rows.every((r) => r.status === "reported"));
    const keys = rows.map((r) => r.idempotency_key).sort();
    const records = [...suite.billing.records.values()].filter((r) => r.companyId === org.companyId);
    assert.deepEqual(records.map((r) => r.key).sort(), keys, "one record per member-hour");
    for (const r of rows) assert.equal(suite.billing.records.get(r.idempotency_key)!.quantity, r.amount_krw);
    // duplicates were counted once: the used allowance is the sum of the records
    const usedA = suite.billing.allowance(org.companyId, org.subject.get(a.id)!)!.used;
    assert.equal(
      usedA,
      rows.filter((r) => r.account_id === a.id).reduce((s, r) => s + r.amount_krw, 0),
    );
    const total = rows.reduce((s, r) => s + r.amount_krw, 0);
    assert.deepEqual(await ledgerOf(t, org.id), { balance: 0, credited: total, credits: 4 });
  });
});
