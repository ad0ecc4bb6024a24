/**
 * Suite billing (src/suite/README.md, "Billing"): a suite-billed organization deploys at zero balance and its
 * balance says suite_billed to admins and members in either context; a creation in the company context needs the
 * member's suite login (402 suite_login_required: none, or expired and not renewable) and allowance left (402
 * suite_usage_exhausted naming the allowance, the reset and whom to ask); the suite down is 503 suite_unavailable.
 * PUT/GET /v1/org/suite/billing by role.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { randomUUID } from "node:crypto";
import { makeOrg } from "../orgs/lib.js";
import { enforceOrg, SUITE_PAUSE_REASON } from "../../src/suite/billing/stop.js";
import { linkOf } from "../../src/suite/billing/repo.js";
import { requireSuite, suiteOf } from "../../src/suite/state.js";
import {
  CONTACT,
  makeSuiteOrg,
  orgHeaders,
  startFakeSuite,
  suiteEnv,
  type FakeSuite,
  type SuiteOrg,
} from "./billing-lib.js";

let t: TestApp;
let suite: FakeSuite;
let org: SuiteOrg;

before(async () => {
  suite = await startFakeSuite();
  t = await createTestApp({ env: suiteEnv(suite) });
  org = await makeSuiteOrg(t, suite);
});
after(async () => {
  await t?.close();
  await suite?.close();
});

/** A company bucket (a creation every admission check sees; buckets hold no server). */
const createBucket = (token: string, name: string) =>
  call(t.app, { method: "POST", url: "/v1/buckets", token, headers: orgHeaders, body: { name } });

describe("suite billing", () => {
  test("balance: suite_billed for the organization and its suite members in either context, at zero balance", async () => {
    const member = org.members[0];
    for (const [token, headers] of [
      [org.admins[0].token, orgHeaders],
      [member.token, orgHeaders],
      [member.token, {}],
      [org.owner.token, {}],
    ] as const) {
      const res = await call(t.app, { url: "/v1/billing/balance", token, headers });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().suite_billed, true, JSON.stringify(headers));
    }
    const org2 = await call(t.app, { url: "/v1/billing/balance", token: org.admins[0].token, headers: orgHeaders });
    assert.equal(org2.json().balance, 0);
    assert.equal(org2.json().billing_policy, "suite");
    const outsider = await call(t.app, { url: "/v1/billing/balance", token: org.outsider.token });
    assert.equal(outsider.json().suite_billed, false);
    // a password account's own wallet stays its own business
    const plain = await signup(t.app);
    assert.equal((await call(t.app, { url: "/v1/billing/balance", token: plain.token })).json().suite_billed, false);
  });

  test("a paid company database is admitted at zero balance", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: org.members[0].token,
      headers: orgHeaders,
      body: { name: "suite-paid", size: "basic" },
    });
    assert.ok([201, 202].includes(res.statusCode), res.body);
    // no server is wanted here: the store's desired state is enough for admission
    await t.db.query("UPDATE databases SET desired_state = 'removed', state = 'removed' WHERE name = 'suite-paid'");
  });

  test("no suite login token, or an expired one that cannot be renewed: 402 suite_login_required", async () => {
    const member = org.members[0];
    const setTokens = (sql: string) =>
      t.db.query(`UPDATE suite_identities SET ${sql} WHERE account_id = $1`, [member.id]);
    try {
      await setTokens("access_token_sealed = NULL, refresh_token_sealed = NULL");
      let res = await createBucket(member.token, `nologin-${member.id.slice(0, 8)}`);
      expectError(res, 402, "suite_login_required");
      assert.match(res.json().error.message, /sign in with the suite again/);

      // expired: the refresh token is tried (the suite refuses it here) and counts as missing
      await setTokens("token_expires_at = now() - interval '1 hour'");
      await t.db.query(
        "UPDATE suite_identities SET access_token_sealed = 'x', refresh_token_sealed = 'refresh-gone' WHERE account_id = $1",
        [member.id],
      );
      res = await createBucket(member.token, `expired-${member.id.slice(0, 8)}`);
      expectError(res, 402, "suite_login_required");
      assert.match(res.json().error.message, /expired and could not be renewed.*sign in with the suite again/);

      await setTokens("refresh_token_sealed = NULL");
      res = await createBucket(member.token, `expired2-${member.id.slice(0, 8)}`);
      expectError(res, 402, "suite_login_required");
      assert.match(res.json().error.message, /has expired/);
    } finally {
      await setTokens("access_token_sealed = 'restored', token_expires_at = now() + interval '1 hour'");
    }
  });

  test("allowance used up: 402 suite_usage_exhausted with the allowance, its reset and whom to ask", async () => {
    const member = org.members[0];
    const sub = org.subject.get(member.id)!;
    suite.billing.setAllowance(org.companyId, sub, { limit: 5000, used: 5000 });
    try {
      const res = await createBucket(member.token, `exhausted-${member.id.slice(0, 8)}`);
      expectError(res, 402, "suite_usage_exhausted");
      const message: string = res.json().error.message;
      assert.match(message, /allowance of 5000 KRW is used up/);
      assert.match(message, /resets at 2030-01-01T00:00:00\.000Z/);
      assert.ok(message.includes(CONTACT), message);
      // the suite down: 503, never a 500
      suite.billing.setAllowance(org.companyId, sub, { limit: 5000, used: 0 });
      suite.billing.failNext(1);
      expectError(await createBucket(member.token, `down-${member.id.slice(0, 8)}`), 503, "suite_unavailable");
    } finally {
      suite.billing.setAllowance(org.companyId, sub, { limit: 100_000, used: 0 });
    }
    const ok = await createBucket(member.token, `fine-${member.id.slice(0, 8)}`);
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test("PUT/GET /v1/org/suite/billing: admins set it, members read their own status, others 404", async () => {
    const put = (token: string, body: unknown) =>
      call(t.app, { method: "PUT", url: "/v1/org/suite/billing", token, body });
    const get = (token: string) => call(t.app, { url: "/v1/org/suite/billing", token });

    expectError(await put(org.members[0].token, { stop_on_exhausted: true }), 403, "forbidden_role");
    expectError(await put(org.admins[0].token, { stop_on_exhausted: "yes" }), 400);
    let res = await put(org.admins[0].token, { stop_on_exhausted: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().stop_on_exhausted, true);
    res = await put(org.owner.token, { stop_on_exhausted: false });
    assert.equal(res.json().stop_on_exhausted, false);

    const all = (await get(org.admins[0].token)).json();
    assert.equal(all.members.length, 3);
    const mine = await get(org.members[0].token);
    assert.equal(mine.statusCode, 200, mine.body);
    assert.deepEqual(
      mine.json().members.map((m: { account_id: string }) => m.account_id),
      [org.members[0].id],
    );
    // the allowance the last admission saw
    assert.equal(mine.json().members[0].allowance.limit_krw, 100_000);
    assert.equal(mine.json().members[0].suite_user_id, org.subject.get(org.members[0].id));

    expectError(await get(org.outsider.token), 404, "not_found");
    const plain = await makeOrg(t, { admins: 0, members: 0 });
    const notLinked = await get(plain.owner.token);
    expectError(notLinked, 404, "not_found");
    assert.match(notLinked.json().error.message, /not linked to a suite company/);
  });

  test("stop on exhausted stops an exhausted member's paid company databases only; turned off, they run again", async () => {
    const [m] = org.members;
    const other = org.admins[0];
    /** a running company database as the databases area keeps it (no server: desired state is what changes) */
    const database = async (creator: string, reason: string | null = null) => {
      const id = randomUUID();
      const slug = `s${id.replace(/-/g, "").slice(0, 20)}`;
      await t.db.query(
        `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, status_reason, db_name, db_user)
         VALUES ($1, $2, 'org', $3, $4, $4, 17, 'basic', 10, 7, $5, 'running', $6, $4, $4)`,
        [id, creator, org.id, slug, reason ? "paused" : "running", reason],
      );
      return id;
    };
    const desired = async (id: string) =>
      (await t.db.query("SELECT desired_state, status_reason FROM databases WHERE id = $1", [id])).rows[0];
    const mine = await database(m.id);
    const overdue = await database(m.id, "overdue: balance below zero");
    const theirs = await database(other.id);
    const put = (on: boolean) =>
      call(t.app, {
        method: "PUT",
        url: "/v1/org/suite/billing",
        token: org.owner.token,
        body: { stop_on_exhausted: on },
      });
    assert.equal((await put(true)).statusCode, 200);
    const sub = org.subject.get(m.id)!;
    suite.billing.setAllowance(org.companyId, sub, { limit: 10, used: 12 });
    try {
      const r = await enforceOrg(t.platform, requireSuite(suiteOf(t.platform)).billing, (await linkOf(t.db, org.id))!);
      assert.deepEqual(r.paused, [mine]);
      assert.deepEqual(await desired(mine), { desired_state: "paused", status_reason: SUITE_PAUSE_REASON });
      assert.equal((await desired(theirs)).desired_state, "running");
      // turned off: what the suite paused runs again at once, what another reason paused stays
      const off = await put(false);
      assert.equal(off.statusCode, 200, off.body);
      assert.equal((await desired(mine)).desired_state, "running");
      assert.deepEqual(await desired(overdue), {
        desired_state: "paused",
        status_reason: "overdue: balance below zero",
      });
      const me = off.json().members.find((x: { account_id: string }) => x.account_id === m.id);
      assert.deepEqual([me.paused, me.allowance.remaining_krw], [false, -2]);
    } finally {
      suite.billing.setAllowance(org.companyId, sub, { limit: 100_000, used: 0 });
      await t.db.query("UPDATE databases SET desired_state = 'removed', state = 'removed' WHERE id = ANY($1)", [
        [mine, overdue, theirs],
      ]);
    }
  });
});
