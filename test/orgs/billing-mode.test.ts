/**
 * billing_mode (README.md, "Billing mode"): company assets of a prepaid organization are charged to the
 * organization's wallet, of a personal-billing organization to the member who created them; the usage record keeps
 * the organization as owner and the member as creator. Paid creation in the company context needs the payer's funds,
 * and the refusal names that wallet. The organization's wallet is read and topped up through /v1/billing/* with
 * X-Owner: org, by admins and the owner only.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { findWalletOf, post, systemWallet, walletFor } from "../../src/billing/ledger/ledger.js";
import { billingJobs, METER_JOB } from "../../src/billing/metering/jobs.js";
import { intervalStartOf, meterInterval } from "../../src/billing/metering/meter.js";
import { prices } from "../../src/billing/catalog.js";
import type { ApiError } from "../../src/http/errors.js";
import type { Owner } from "../../src/kernel/owner.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

const STEP = prices().meter_interval_seconds * 1000;
// basic database: 36 KRW/h = 3 won per 5 minutes; 50 GB storage at 0.18 KRW/GB-h = 0.75 won per 5 minutes

let t: TestApp;
let org: TestOrg;
const orgOwner = (): Owner => ({ kind: "org", id: org.id });
const person = (id: string): Owner => ({ kind: "account", id });

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.orgbilling.test" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
});
after(async () => t?.close());

/** An adjustment credit to any owner's KRW wallet (the operator's credit route takes accounts only). */
async function credit(owner: Owner, amount: number) {
  const wallet = await walletFor(t.db, owner, "KRW");
  const adjustments = await systemWallet(t.db, "adjustments", "KRW");
  const id = randomUUID();
  await post(t.db, {
    currency: "KRW",
    source: { type: "adjustment", id },
    idempotencyKey: `adjustment:${id}`,
    legs: [
      { walletId: wallet.id, amount },
      { walletId: adjustments.id, amount: -amount },
    ],
    memo: "org billing test",
  });
}

const balanceOf = async (owner: Owner) => (await findWalletOf(t.db, owner, "KRW"))?.balance ?? 0;

/** A running company database as the databases area keeps it (no server: the meter only reads the table). */
async function companyDatabase(creator: string): Promise<string> {
  const id = randomUUID();
  const slug = `o${id.replace(/-/g, "").slice(0, 20)}`;
  await t.db.query(
    `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, db_name, db_user, created_at)
     VALUES ($1, $2, 'org', $3, $4, $4, 17, 'basic', 50, 7, 'running', 'running', $4, $4, $5)`,
    [id, creator, org.id, slug, new Date(0)],
  );
  return id;
}

const setMode = async (mode: "personal" | "prepaid") => {
  const res = await call(t.app, {
    method: "PATCH",
    url: "/v1/org",
    token: org.owner.token,
    body: { billing_mode: mode },
  });
  assert.equal(res.statusCode, 200, res.body);
};

const payer = (q: Parameters<typeof t.platform.kernel.payer>[0], o: Owner, a: string) =>
  t.platform.kernel.payer(q, o, a);

const recordOf = async (resourceId: string) => {
  const { rows } = await t.db.query(
    `SELECT r.owner_kind, r.owner_id::text, r.account_id::text, w.owner_kind AS wallet_kind, w.owner_id AS wallet_owner
       FROM usage_records r JOIN ledger_wallets w ON w.id = r.wallet_id WHERE r.resource_id = $1`,
    [resourceId],
  );
  return rows;
};

const admit = (accountId: string) =>
  t.platform.kernel.admit(t.db, { owner: orgOwner(), accountId, kind: "database", size: "basic", storageGb: 10 });

describe("organization billing mode", () => {
  test("prepaid: a member's company asset is charged to the organization's wallet", async () => {
    await setMode("prepaid");
    await credit(orgOwner(), 10_000);
    const member = org.members[0];
    const before = await balanceOf(person(member.id));
    const dbId = await companyDatabase(member.id);
    const interval = new Date(intervalStartOf(new Date()).getTime() - 100 * STEP);
    await meterInterval(t.db, t.platform.kernel.metering, interval, { payer });
    await meterInterval(t.db, t.platform.kernel.metering, new Date(interval.getTime() + STEP), { payer });
    assert.equal(await balanceOf(orgOwner()), 10_000 - 7, "3.75 + 3.75 won: 7 charged, 0.5 carried");
    assert.equal(await balanceOf(person(member.id)), before);
    const records = await recordOf(dbId);
    assert.equal(records.length, 2);
    for (const r of records)
      assert.deepEqual(r, {
        owner_kind: "org",
        owner_id: org.id,
        account_id: member.id,
        wallet_kind: "org",
        wallet_owner: org.id,
      });
    await t.db.query("UPDATE databases SET state = 'removed', desired_state = 'removed' WHERE id = $1", [dbId]);

    // admins see the organization's wallet through /v1/billing/* in the company context
    const bal = await call(t.app, { url: "/v1/billing/balance", token: org.admins[0].token, headers: ORG });
    assert.equal(bal.statusCode, 200, bal.body);
    assert.equal(bal.json().balance, 10_000 - 7);
    const txs = await call(t.app, {
      url: "/v1/billing/transactions?type=usage",
      token: org.owner.token,
      headers: ORG,
    });
    assert.equal(txs.statusCode, 200, txs.body);
    assert.deepEqual(
      txs.json().items.map((x: { amount: number }) => x.amount),
      [-4, -3],
    );
  });

  test("personal: the same company asset is charged to the member who created it (the platform's meter job)", async () => {
    await setMode("personal");
    const member = org.members[0];
    await credit(person(member.id), 1_000);
    const orgBefore = await balanceOf(orgOwner());
    const dbId = await companyDatabase(member.id);
    const meter = billingJobs({
      db: t.db,
      kernel: t.platform.kernel,
      overdue: { action: "keep", graceHours: 24 },
    }).find((j) => j.name === METER_JOB)!;
    await meter.handler({}, { id: "test", retryCount: 0 });
    assert.equal(await balanceOf(person(member.id)), 1_000 - 3);
    assert.equal(await balanceOf(orgOwner()), orgBefore);
    assert.deepEqual(await recordOf(dbId), [
      { owner_kind: "org", owner_id: org.id, account_id: member.id, wallet_kind: "account", wallet_owner: member.id },
    ]);
    // per-owner reports still see the organization's usage
    const usage = await call(t.app, { url: "/v1/bill/summary", token: org.admins[0].token, headers: ORG });
    assert.equal(usage.statusCode, 200, usage.body);
    assert.ok(usage.json().month_to_date.total_microkrw >= 3_750_000);
    await t.db.query("UPDATE databases SET state = 'removed', desired_state = 'removed' WHERE id = $1", [dbId]);
  });

  test("paid creation in the company context needs the payer's funds; the refusal names that wallet", async () => {
    const rich = org.admins[0];
    const poor = org.members[0];
    await credit(person(rich.id), 500);
    await t.db.query(
      "UPDATE ledger_wallets SET balance = 0 WHERE owner_kind = 'account' AND owner_id = $1 AND currency = 'KRW'",
      [poor.id],
    );
    // personal billing: the member's own balance counts, not the organization's
    await setMode("personal");
    await admit(rich.id);
    await assert.rejects(admit(poor.id), (err: ApiError) => {
      assert.equal(err.code, "insufficient_funds");
      assert.match(err.message, /your personal balance is 0 KRW/);
      return true;
    });
    const refused = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: poor.token,
      headers: ORG,
      body: { name: "company-paid", size: "basic" },
    });
    expectError(refused, 402, "insufficient_funds");
    assert.match(refused.json().error.message, /member who creates them/);

    // prepaid: the organization's wallet counts, whoever creates
    await setMode("prepaid");
    await admit(poor.id);
    await t.db.query(
      "UPDATE ledger_wallets SET overdue_since = now() WHERE owner_kind = 'org' AND owner_id = $1 AND currency = 'KRW'",
      [org.id],
    );
    await assert.rejects(admit(rich.id), /The organization's wallet is overdue/);
    await t.db.query(
      "UPDATE ledger_wallets SET overdue_since = NULL, balance = 0 WHERE owner_kind = 'org' AND owner_id = $1",
      [org.id],
    );
    await assert.rejects(admit(rich.id), /the organization's wallet balance is 0 KRW/);
  });

  test("the organization's billing routes are for admins and the owner: a member gets 403 forbidden_role", async () => {
    const member = org.members[0];
    for (const url of ["/v1/billing/balance", "/v1/billing/transactions", "/v1/bill/summary", "/v1/billing/cards"])
      expectError(await call(t.app, { url, token: member.token, headers: ORG }), 403, "forbidden_role");
    expectError(
      await call(t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: member.token,
        headers: ORG,
        body: { provider: "toss", amount: 10000, currency: "KRW" },
      }),
      403,
      "forbidden_role",
    );
    // the organization's card and bank transfers go through /v1/org, with its rules, even for the owner
    for (const [method, url, instead] of [
      ["DELETE", "/v1/billing/cards", "DELETE /v1/org/billing/card"],
      ["POST", "/v1/billing/bank-transfers", "POST /v1/org/bank-transfers"],
    ] as const) {
      const res = await call(t.app, { method, url, token: org.owner.token, headers: ORG, body: {} });
      expectError(res, 403, "forbidden_role");
      assert.match(res.json().error.message, new RegExp(instead));
    }
    // their own billing stays theirs
    assert.equal((await call(t.app, { url: "/v1/billing/balance", token: member.token })).statusCode, 200);
    assert.equal(
      (await call(t.app, { url: "/v1/billing/balance", token: org.owner.token, headers: ORG })).statusCode,
      200,
    );
  });
});
