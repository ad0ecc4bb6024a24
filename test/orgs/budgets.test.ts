/**
 * Organization budgets through HTTP, with usage records written straight into billing's table (the fixture a
 * metering run would leave): admins set one budget per target, GET shows this month's consumption, a used-up block
 * budget (company, department with its sub-departments, member) refuses paid creation in the company context with
 * 402 budget_exceeded while free creation and the personal context go on, and a warn budget crossing 80% mails the
 * owner and admins once (a local SMTP server collects the mail).
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { sendBudgetAlerts } from "../../src/orgs/budgets/alerts.js";
import { addMember, makeOrg, ORG, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;
let smtp: SMTPServer;
const inbox: ParsedMail[] = [];

const putBudget = (token: string, body: object) => call(t.app, { method: "PUT", url: "/v1/org/budgets", token, body });
const budgets = async (token: string) => {
  const res = await call(t.app, { url: "/v1/org/budgets", token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().items as any[];
};
const createOrgDb = (token: string, size: string, headers: Record<string, string> = ORG) =>
  call(t.app, {
    method: "POST",
    url: "/v1/databases",
    token,
    body: { name: `b-${randomUUID().slice(0, 8)}`, size },
    headers,
  });
const createSite = (token: string) =>
  call(t.app, { method: "POST", url: "/v1/static", token, body: { name: "budget-site" }, headers: ORG });

/** What a metering run leaves: one usage record of `krw` for a company asset the account created, now. */
async function usage(orgId: string, accountId: string, krw: number) {
  const { rows } = await t.db.query<{ id: string }>(
    `INSERT INTO ledger_wallets (id, owner_kind, owner_id, currency, policy, balance)
     VALUES (gen_random_uuid(), 'org', $1, 'KRW', 'prepaid', 0)
     ON CONFLICT (owner_kind, owner_id, currency) DO UPDATE SET policy = EXCLUDED.policy RETURNING id`,
    [orgId],
  );
  await t.db.query(
    `INSERT INTO usage_records (resource_kind, resource_id, account_id, owner_kind, owner_id, wallet_id, interval_start,
       interval_seconds, size, state, storage_gb, instance_micro, storage_micro)
     VALUES ('pod', $1, $2, 'org', $3, $4, date_trunc('minute', now()), 300, 'micro', 'running', 0, $5, 0)`,
    [randomUUID(), accountId, orgId, rows[0].id, krw * 1_000_000],
  );
}

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, done) {
      simpleParser(stream)
        .then((mail) => inbox.push(mail))
        .then(() => done(), done);
    },
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", r));
  const port = (smtp.server.address() as AddressInfo).port;
  t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, APPS_DOMAIN: "apps.budgets.test" } });
  org = await makeOrg(t, { admins: 1, members: 2 });
});
after(async () => {
  await t?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

describe("budgets", () => {
  test("admins set one budget per target; members get 403 forbidden_role; unknown targets are 400", async () => {
    const admin = org.admins[0].token;
    const first = await putBudget(admin, { scope: "company", amount_krw: 1000, mode: "warn" });
    assert.equal(first.statusCode, 201, first.body);
    const again = await putBudget(admin, { scope: "company", amount_krw: 2000, mode: "block" });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().id, first.json().id);
    assert.equal(again.json().amount_krw, 2000);
    assert.equal(again.json().mode, "block");
    expectError(
      await putBudget(org.members[0].token, { scope: "company", amount_krw: 1, mode: "warn" }),
      403,
      "forbidden_role",
    );
    expectError(
      await putBudget(admin, { scope: "department", department_code: "NOPE", amount_krw: 1, mode: "warn" }),
      400,
      "unknown_department",
    );
    expectError(
      await putBudget(admin, { scope: "member", email: org.outsider.email, amount_krw: 1, mode: "warn" }),
      400,
      "invalid_request",
    );
    expectError(
      await putBudget(admin, { scope: "company", email: org.members[0].email, amount_krw: 1, mode: "warn" }),
      400,
      "invalid_request",
    );
    expectError(await putBudget(admin, { scope: "company", amount_krw: 0, mode: "warn" }), 400, "invalid_request");
    const items = await budgets(admin);
    assert.equal(items.length, 1);
    assert.equal(items[0].consumed_krw, 0);
    assert.equal(items[0].month, new Date().toISOString().slice(0, 7));
  });

  test("a used-up company block budget refuses paid creation with 402 budget_exceeded; free creation goes on", async () => {
    const m = org.members[0];
    await usage(org.id, m.id, 2500);
    const [company] = await budgets(org.admins[0].token);
    assert.equal(company.consumed_krw, 2500);
    assert.equal(company.percent, 125);
    assert.equal(company.exceeded, true);
    const res = await createOrgDb(m.token, "basic");
    expectError(res, 402, "budget_exceeded");
    assert.match(res.json().error.message, /company budget \(2000 KRW a month, mode block\) is used up: 2500 KRW/);
    assert.equal((await createSite(m.token)).statusCode, 201);
    // the personal context is not the organization's: no budget, only the member's own (empty) balance
    expectError(await createOrgDb(m.token, "basic", {}), 402, "insufficient_funds");
    // a larger budget lifts the block; what is refused next is money, not the budget
    await putBudget(org.admins[0].token, { scope: "company", amount_krw: 1_000_000, mode: "block" });
    expectError(await createOrgDb(m.token, "basic"), 402, "insufficient_funds");
  });

  test("department budgets count their sub-departments' members; member budgets their own usage", async () => {
    const [parent, child] = [randomUUID(), randomUUID()];
    await t.db.query(
      `INSERT INTO org_departments (id, org_id, code, name, parent_id) VALUES ($1, $3, 'OPS', 'Operations', NULL),
         ($2, $3, 'OPS-DB', 'Databases', $1)`,
      [parent, child, org.id],
    );
    const ops = await signup(t.app);
    await addMember(t, org.id, ops, "member", child);
    const admin = org.admins[0].token;
    const dept = await putBudget(admin, {
      scope: "department",
      department_code: "OPS",
      amount_krw: 500,
      mode: "block",
    });
    assert.equal(dept.statusCode, 201, dept.body);
    await usage(org.id, ops.id, 600);
    const res = await createOrgDb(ops.token, "basic");
    expectError(res, 402, "budget_exceeded");
    assert.match(res.json().error.message, /department budget of OPS/);
    // a member outside the department is not held by it
    expectError(await createOrgDb(org.members[1].token, "basic"), 402, "insufficient_funds");

    const own = await putBudget(admin, {
      scope: "member",
      email: org.members[1].email,
      amount_krw: 100,
      mode: "block",
    });
    assert.equal(own.statusCode, 201, own.body);
    assert.equal(own.json().consumed_krw, 0);
    await usage(org.id, org.members[1].id, 100);
    expectError(await createOrgDb(org.members[1].token, "basic"), 402, "budget_exceeded");

    // members see the budgets that apply to them; admins see every one
    const mine = await budgets(ops.token);
    assert.deepEqual(mine.map((b) => b.scope).sort(), ["company", "department"]);
    assert.equal(mine.find((b) => b.scope === "department").consumed_krw, 600);
    assert.equal((await budgets(admin)).length, 3);

    const del = await call(t.app, { method: "DELETE", url: `/v1/org/budgets/${dept.json().id}`, token: admin });
    assert.equal(del.statusCode, 200, del.body);
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/org/budgets/${dept.json().id}`, token: admin }),
      404,
      "not_found",
    );
    expectError(
      await call(t.app, { method: "DELETE", url: "/v1/org/budgets/x", token: org.members[0].token }),
      403,
      "forbidden_role",
    );
    expectError(await createOrgDb(ops.token, "basic"), 402, "insufficient_funds");
  });

  test("a warn budget crossing 80% mails the owner and admins once; 100% once more", async () => {
    const other = await makeOrg(t, { admins: 1, members: 1 });
    const set = await putBudget(other.admins[0].token, { scope: "company", amount_krw: 1000, mode: "warn" });
    assert.equal(set.statusCode, 201, set.body);
    const deps = { db: t.db, kernel: t.platform.kernel, log: t.platform.log };
    await usage(other.id, other.members[0].id, 790);
    assert.equal(await sendBudgetAlerts(deps), 0);
    await usage(other.id, other.members[0].id, 60);
    assert.equal(await sendBudgetAlerts(deps), 1);
    assert.equal(await sendBudgetAlerts(deps), 0, "the second run sends nothing");
    await waitFor(() => inbox.length >= 1);
    assert.equal(inbox.length, 1);
    const mail = inbox[0];
    const to = [mail.to].flat().flatMap((a) => a!.value.map((v) => v.address));
    assert.deepEqual(to.sort(), [other.owner.email, other.admins[0].email].sort());
    assert.match(mail.subject ?? "", /85% of the company budget/);
    assert.match(mail.text ?? "", /reached 80%: 850 of 1000 KRW/);
    // warn never blocks
    expectError(await createOrgDb(other.members[0].token, "basic"), 402, "insufficient_funds");

    await usage(other.id, other.members[0].id, 200);
    assert.equal(await sendBudgetAlerts(deps), 1);
    assert.equal(await sendBudgetAlerts(deps), 0);
    await waitFor(() => inbox.length >= 2);
    assert.match(inbox[1].text ?? "", /reached 100%: 1050 of 1000 KRW/);
    const { rows } = await t.db.query("SELECT threshold FROM org_budget_alerts WHERE budget_id = $1 ORDER BY 1", [
      set.json().id,
    ]);
    assert.deepEqual(
      rows.map((r) => r.threshold),
      [80, 100],
    );
  });
});

async function waitFor(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}
