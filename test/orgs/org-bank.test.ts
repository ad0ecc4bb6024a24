import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, OPERATOR_TOKEN, type TestApp } from "../helpers/app.js";
import { makeOrg, type Person, type TestOrg } from "./lib.js";

const ENV = {
  BANK_DEPOSIT_BANK: "국민은행",
  BANK_DEPOSIT_ACCOUNT: "123-456-789012",
  BANK_DEPOSIT_HOLDER: "주식회사 플랫폼",
  BANK_TRANSFER_MIN_KRW: "10000",
  BANK_TRANSFER_MAX_KRW: "5000000",
};
const INVOICE = {
  business_number: "2208162517",
  company_name: "주식회사 예시",
  representative: "김대표",
  email: "tax@example.com",
};

describe("organization bank transfers", () => {
  let t: TestApp;
  let org: TestOrg;
  let admin: Person;

  const req = (who: Person | string, method: "GET" | "POST" | "PATCH", url: string, body?: unknown) =>
    call(t.app, { method, url, token: typeof who === "string" ? who : who.token, body });
  const operator = (method: "GET" | "POST", url: string) =>
    call(t.app, { method, url, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  const create = (who: Person, body: Record<string, unknown> = {}) =>
    req(who, "POST", "/v1/org/bank-transfers", {
      amount_krw: 50_000,
      depositor_name: "주식회사 예시",
      receipt_type: "none",
      ...body,
    });
  const walletOf = async (kind: string, id: string) =>
    (
      await t.db.query<{ balance: number }>(
        "SELECT balance FROM ledger_wallets WHERE owner_kind = $1 AND owner_id = $2 AND currency = 'KRW'",
        [kind, id],
      )
    ).rows[0]?.balance ?? 0;
  const setMode = (o: TestOrg, mode: string) =>
    t.db.query("UPDATE orgs SET billing_mode = $2 WHERE id = $1", [o.id, mode]);

  before(async () => {
    t = await createTestApp({ env: ENV });
    org = await makeOrg(t, { admins: 1, members: 1 });
    admin = org.admins[0];
    const res = await req(org.owner, "PATCH", "/v1/org", { billing_mode: "prepaid" });
    assert.equal(res.statusCode, 200, res.body);
  });
  after(async () => {
    await t.close();
  });

  test("config: admins see the deposit account, limits and the organization's own business details", async () => {
    const res = await req(admin, "GET", "/v1/org/bank-transfer/config");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      deposit_account: { bank_name: "국민은행", account_number: "123-456-789012", account_holder: "주식회사 플랫폼" },
      min_amount_krw: 10_000,
      max_amount_krw: 5_000_000,
      max_pending: 5,
      business_info: null,
      billing_mode: "prepaid",
      available: true,
    });
    expectError(await req(org.members[0], "GET", "/v1/org/bank-transfer/config"), 403, "forbidden_role");
    expectError(await req(org.outsider, "GET", "/v1/org/bank-transfer/config"), 404, "not_found");
  });

  test("create, list, deposit-reported and cancel for the organization wallet; the operator's confirmation credits it", async () => {
    expectError(await create(org.members[0]), 403, "forbidden_role");
    expectError(await create(admin, { amount_krw: 500 }), 400, "amount_out_of_range");
    expectError(
      await create(admin, { receipt_type: "tax_invoice", tax_invoice: { ...INVOICE, business_number: "1234567890" } }),
      400,
      "invalid_business_number",
    );
    const res = await create(admin, { receipt_type: "tax_invoice", tax_invoice: INVOICE });
    assert.equal(res.statusCode, 201, res.body);
    const first = res.json();
    assert.equal(first.status, "pending");
    assert.equal(first.requested_by, admin.id);
    assert.equal(first.tax_invoice.business_number, "220-81-62517");

    // the business details are the organization's, not the admin's personal ones
    const config = (await req(org.owner, "GET", "/v1/org/bank-transfer/config")).json();
    assert.equal(config.business_info.company_name, "주식회사 예시");
    assert.equal((await req(admin, "GET", "/v1/billing/bank-transfer/config")).json().business_info, null);
    assert.deepEqual((await req(admin, "GET", "/v1/billing/bank-transfers")).json().items, []);

    const second = (await create(org.owner, { amount_krw: 20_000 })).json();
    const list = (await req(admin, "GET", "/v1/org/bank-transfers")).json();
    assert.deepEqual(
      list.items.map((i: { id: string }) => i.id),
      [second.id, first.id],
    );
    assert.equal((await req(admin, "GET", "/v1/org/bank-transfers?status=pending&limit=1")).json().items.length, 1);
    expectError(await req(org.members[0], "GET", "/v1/org/bank-transfers"), 403, "forbidden_role");

    const reported = await req(admin, "POST", `/v1/org/bank-transfers/${first.id}/deposit-reported`, {
      depositor_name: "예시(주)",
    });
    assert.equal(reported.statusCode, 200, reported.body);
    assert.ok(reported.json().deposit_reported_at);
    assert.equal(reported.json().depositor_name, "예시(주)");
    expectError(await req(admin, "POST", `/v1/org/bank-transfers/${first.id}/cancel`), 409, "deposit_reported");
    const cancelled = await req(admin, "POST", `/v1/org/bank-transfers/${second.id}/cancel`);
    assert.equal(cancelled.json().status, "cancelled");
    expectError(
      await req(admin, "POST", `/v1/org/bank-transfers/${second.id}/deposit-reported`, {}),
      409,
      "invalid_state",
    );

    // another organization's admin and the admin's personal context do not see it
    const other = await makeOrg(t, { admins: 1, members: 0 });
    expectError(await req(other.admins[0], "POST", `/v1/org/bank-transfers/${first.id}/cancel`), 404, "not_found");
    expectError(await req(admin, "POST", `/v1/billing/bank-transfers/${first.id}/cancel`), 404, "not_found");

    const pending = (await operator("GET", "/v1/operator/bank-transfers?status=pending")).json();
    assert.ok(pending.items.some((i: { id: string }) => i.id === first.id));
    const confirmed = await operator("POST", `/v1/operator/bank-transfers/${first.id}/confirm`);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(await walletOf("org", org.id), 50_000);
    assert.equal(await walletOf("account", admin.id), 0);
    const after = (await req(admin, "GET", "/v1/org/bank-transfers?status=confirmed")).json();
    assert.deepEqual(
      after.items.map((i: { id: string; status: string }) => [i.id, i.status]),
      [[first.id, "confirmed"]],
    );
    // and the organization's balance shows it
    const balance = await call(t.app, {
      url: "/v1/billing/balance",
      token: admin.token,
      headers: { "x-owner": "org" },
    });
    assert.equal(balance.json().balance, 50_000);
  });

  test("card and suite organizations are billed afterwards: 409 (their transfers can still be listed and cancelled)", async () => {
    const o = await makeOrg(t, { admins: 1, members: 0 });
    const pending = (await create(o.admins[0])).json();
    for (const mode of ["card", "suite"]) {
      await setMode(o, mode);
      expectError(await create(o.admins[0]), 409, "conflict");
      const config = (await req(o.admins[0], "GET", "/v1/org/bank-transfer/config")).json();
      assert.equal(config.available, false);
      assert.equal(config.billing_mode, mode);
    }
    assert.equal((await req(o.admins[0], "GET", "/v1/org/bank-transfers")).json().items.length, 1);
    assert.equal(
      (await req(o.admins[0], "POST", `/v1/org/bank-transfers/${pending.id}/cancel`)).json().status,
      "cancelled",
    );
    // personal organizations may top up their wallet too
    await setMode(o, "personal");
    assert.equal((await create(o.admins[0])).statusCode, 201);
  });
});
