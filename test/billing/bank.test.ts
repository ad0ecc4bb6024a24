import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, OPERATOR_TOKEN, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { isValidBrn } from "../../src/billing/bank/brn.js";

const ENV = {
  BANK_DEPOSIT_BANK: "국민은행",
  BANK_DEPOSIT_ACCOUNT: "123-456-789012",
  BANK_DEPOSIT_HOLDER: "주식회사 플랫폼",
  BANK_TRANSFER_MIN_KRW: "10000",
  BANK_TRANSFER_MAX_KRW: "5000000",
};
const INVOICE = {
  business_number: "220-81-62517",
  company_name: "주식회사 예시",
  representative: "김대표",
  email: "tax@example.com",
  business_type: "서비스",
  business_item: "소프트웨어",
};

describe("business registration number", () => {
  test("accepts 10 digits with a correct check digit, with or without hyphens; rejects the rest", () => {
    for (const ok of ["220-81-62517", "2208162517", "124-81-00998", "120-81-47521"])
      assert.equal(isValidBrn(ok), true, ok);
    for (const bad of [
      "220-81-62518",
      "123-45-67890",
      "220816251",
      "22081625170",
      "220-8162-517",
      "abc-de-fghij",
      "000-00-00000",
      "",
    ])
      assert.equal(isValidBrn(bad), false, bad);
  });
});

describe("bank transfers", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: ENV });
  });
  after(async () => {
    await t.close();
  });

  const create = (token: string, body: unknown) =>
    call(t.app, { method: "POST", url: "/v1/billing/bank-transfers", token, body });
  const created = async (token: string, body: Record<string, unknown> = {}) => {
    const res = await create(token, { amount_krw: 100_000, depositor_name: "홍길동", receipt_type: "none", ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const action = (token: string, id: string, what: "cancel" | "deposit-reported", body: unknown = {}) =>
    call(t.app, { method: "POST", url: `/v1/billing/bank-transfers/${id}/${what}`, token, body });
  const operator = (id: string, what: "confirm" | "reject", body: unknown = {}) =>
    call(t.app, { method: "POST", url: `/v1/operator/bank-transfers/${id}/${what}`, token: OPERATOR_TOKEN, body });
  const balance = async (accountId: string, currency = "KRW") =>
    (
      await t.db.query<{ balance: number }>(
        "SELECT balance FROM ledger_wallets WHERE owner_kind = 'account' AND owner_id = $1 AND currency = $2",
        [accountId, currency],
      )
    ).rows[0]?.balance ?? 0;

  test("config shows the deposit account, limits, and the business details last used", async () => {
    const u = await signup(t.app);
    const res = await call(t.app, { url: "/v1/billing/bank-transfer/config", token: u.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      deposit_account: { bank_name: "국민은행", account_number: "123-456-789012", account_holder: "주식회사 플랫폼" },
      min_amount_krw: 10_000,
      max_amount_krw: 5_000_000,
      max_pending: 5,
      business_info: null,
    });
    await created(u.token, { receipt_type: "tax_invoice", tax_invoice: { ...INVOICE, business_number: "2208162517" } });
    const again = (await call(t.app, { url: "/v1/billing/bank-transfer/config", token: u.token })).json();
    assert.deepEqual(again.business_info, { ...INVOICE, business_number: "220-81-62517" });
  });

  test("create: pending, with or without a tax invoice; the number is normalised", async () => {
    const u = await signup(t.app);
    const plain = await created(u.token);
    assert.equal(plain.status, "pending");
    assert.equal(plain.amount_krw, 100_000);
    assert.equal(plain.tax_invoice, null);
    assert.equal(plain.deposit_reported_at, null);
    const invoiced = await created(u.token, {
      receipt_type: "tax_invoice",
      tax_invoice: { ...INVOICE, business_number: "1248100998" },
    });
    assert.equal(invoiced.tax_invoice.business_number, "124-81-00998");
    assert.equal(invoiced.receipt_type, "tax_invoice");
    assert.equal(await balance(u.id), 0, "nothing credited before an operator confirms");
  });

  test("create errors: business number, missing or unexpected invoice, amount limits, blank names, unknown fields", async () => {
    const u = await signup(t.app);
    const base = { amount_krw: 100_000, depositor_name: "홍길동" };
    expectError(
      await create(u.token, {
        ...base,
        receipt_type: "tax_invoice",
        tax_invoice: { ...INVOICE, business_number: "220-81-62518" },
      }),
      400,
      "invalid_business_number",
    );
    expectError(
      await create(u.token, {
        ...base,
        receipt_type: "tax_invoice",
        tax_invoice: { ...INVOICE, business_number: "22a8162517" },
      }),
      400,
      "invalid_business_number",
    );
    expectError(await create(u.token, { ...base, receipt_type: "tax_invoice" }), 400, "tax_invoice_required");
    expectError(await create(u.token, { ...base, receipt_type: "none", tax_invoice: INVOICE }), 400, "invalid_request");
    expectError(
      await create(u.token, { ...base, receipt_type: "tax_invoice", tax_invoice: { ...INVOICE, email: "not-mail" } }),
      400,
      "invalid_request",
    );
    expectError(
      await create(u.token, { ...base, receipt_type: "tax_invoice", tax_invoice: { business_number: "220-81-62517" } }),
      400,
      "invalid_request",
    );
    expectError(
      await create(u.token, { ...base, amount_krw: 9_999, receipt_type: "none" }),
      400,
      "amount_out_of_range",
    );
    expectError(
      await create(u.token, { ...base, amount_krw: 5_000_001, receipt_type: "none" }),
      400,
      "amount_out_of_range",
    );
    expectError(
      await create(u.token, { ...base, depositor_name: "   ", receipt_type: "none" }),
      400,
      "invalid_request",
    );
    expectError(await create(u.token, { ...base, receipt_type: "cash_receipt" }), 400, "invalid_request");
    expectError(await create(u.token, { ...base, receipt_type: "none", bonus: 1 }), 400, "invalid_request");
    const { rows } = await t.db.query("SELECT 1 FROM billing_bank_transfers WHERE account_id = $1", [u.id]);
    assert.equal(rows.length, 0);
  });

  test("at most 5 pending at once, also under concurrency", async () => {
    const u = await signup(t.app);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        create(u.token, { amount_krw: 10_000, depositor_name: "홍길동", receipt_type: "none" }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 5);
    for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, "too_many_pending");
    const first = results.find((r) => r.statusCode === 201)!.json();
    await action(u.token, first.id, "cancel");
    assert.equal(
      (await create(u.token, { amount_krw: 10_000, depositor_name: "홍길동", receipt_type: "none" })).statusCode,
      201,
    );
  });

  test("list: own requests only, newest first, status filter and cursor pages; get one", async () => {
    const u = await signup(t.app);
    const other = await signup(t.app);
    await created(other.token);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await created(u.token, { amount_krw: 10_000 + i })).id);
    await action(u.token, ids[0], "cancel");
    const all = (await call(t.app, { url: "/v1/billing/bank-transfers", token: u.token })).json();
    assert.deepEqual(
      all.items.map((x: { id: string }) => x.id),
      [...ids].reverse(),
    );
    assert.equal(all.next_cursor, null);
    const pending = (await call(t.app, { url: "/v1/billing/bank-transfers?status=pending", token: u.token })).json();
    assert.deepEqual(
      pending.items.map((x: { id: string }) => x.id),
      [ids[2], ids[1]],
    );
    const page1 = (await call(t.app, { url: "/v1/billing/bank-transfers?limit=2", token: u.token })).json();
    assert.equal(page1.items.length, 2);
    const page2 = (
      await call(t.app, { url: `/v1/billing/bank-transfers?limit=2&cursor=${page1.next_cursor}`, token: u.token })
    ).json();
    assert.deepEqual(
      [...page1.items, ...page2.items].map((x: { id: string }) => x.id),
      [...ids].reverse(),
    );
    expectError(
      await call(t.app, { url: "/v1/billing/bank-transfers?status=weird", token: u.token }),
      400,
      "invalid_request",
    );
    assert.equal(
      (await call(t.app, { url: `/v1/billing/bank-transfers/${ids[1]}`, token: u.token })).json().amount_krw,
      10_001,
    );
    expectError(
      await call(t.app, { url: `/v1/billing/bank-transfers/${ids[1]}`, token: other.token }),
      404,
      "not_found",
    );
  });

  test("pending → cancelled by the customer before the deposit; not after it was reported; cancel is idempotent", async () => {
    const u = await signup(t.app);
    const a = await created(u.token);
    const res = await action(u.token, a.id, "cancel");
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, "cancelled");
    assert.ok(res.json().decided_at);
    assert.equal((await action(u.token, a.id, "cancel")).json().status, "cancelled");
    expectError(await action(u.token, a.id, "deposit-reported"), 409, "invalid_state");
    expectError(await operator(a.id, "confirm"), 409, "invalid_state");

    const b = await created(u.token);
    const reported = await action(u.token, b.id, "deposit-reported", { depositor_name: "홍길동(회사)" });
    assert.equal(reported.statusCode, 200, reported.body);
    assert.ok(reported.json().deposit_reported_at);
    assert.equal(reported.json().depositor_name, "홍길동(회사)");
    assert.equal(reported.json().status, "pending");
    expectError(await action(u.token, b.id, "cancel"), 409, "deposit_reported");
    // reporting again keeps the first report time
    const again = await action(u.token, b.id, "deposit-reported", {});
    assert.equal(again.json().deposit_reported_at, reported.json().deposit_reported_at);
    assert.equal(again.json().depositor_name, "홍길동(회사)");
    expectError(await action(u.token, b.id, "deposit-reported", { depositor_name: "  " }), 400, "invalid_request");
    expectError(await action(u.token, randomUUID(), "cancel"), 404, "not_found");
    const other = await signup(t.app);
    expectError(await action(other.token, b.id, "deposit-reported"), 404, "not_found");
  });

  test("operator confirm credits the KRW wallet once, even when confirmed concurrently; then nothing else applies", async () => {
    const u = await signup(t.app);
    const a = await created(u.token, { amount_krw: 250_000 });
    await action(u.token, a.id, "deposit-reported");
    const results = await Promise.all(Array.from({ length: 20 }, () => operator(a.id, "confirm")));
    const ok = results.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 409, "invalid_state");
    const body = ok[0].json();
    assert.equal(body.status, "confirmed");
    assert.equal(body.account_id, u.id);
    assert.ok(body.credit_transaction_id);
    assert.equal(await balance(u.id), 250_000);
    const { rows } = await t.db.query(
      "SELECT source_type, idempotency_key FROM ledger_transactions WHERE source_id = $1",
      [a.id],
    );
    assert.deepEqual(rows, [{ source_type: "topup", idempotency_key: `bank-transfer:${a.id}:credit` }]);
    expectError(await operator(a.id, "reject"), 409, "invalid_state");
    expectError(await action(u.token, a.id, "cancel"), 409, "invalid_state");
    assert.equal(
      (await call(t.app, { url: `/v1/billing/bank-transfers/${a.id}`, token: u.token })).json().status,
      "confirmed",
    );
  });

  test("operator reject closes the request without credit; operator list filters by status", async () => {
    const u = await signup(t.app);
    const a = await created(u.token);
    const res = await operator(a.id, "reject", { reason: "no matching deposit" });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, "rejected");
    assert.equal(res.json().reject_reason, "no matching deposit");
    assert.equal(await balance(u.id), 0);
    expectError(await operator(a.id, "confirm"), 409, "invalid_state");
    expectError(await operator(randomUUID(), "confirm"), 404, "not_found");
    const pending = (
      await call(t.app, { url: "/v1/operator/bank-transfers?status=pending&limit=200", token: OPERATOR_TOKEN })
    ).json();
    assert.ok(pending.items.every((x: { status: string }) => x.status === "pending"));
    const rejected = (
      await call(t.app, { url: "/v1/operator/bank-transfers?status=rejected&limit=200", token: OPERATOR_TOKEN })
    ).json();
    assert.ok(rejected.items.some((x: { id: string; account_id: string }) => x.id === a.id && x.account_id === u.id));
  });

  test("operator endpoints refuse user tokens; user endpoints need billing scopes", async () => {
    const u = await signup(t.app);
    const a = await created(u.token);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/operator/bank-transfers/${a.id}/confirm`, token: u.token }),
      401,
      "auth_required",
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: `/v1/operator/accounts/${u.id}/credit`,
        token: u.token,
        body: { amount: 1, currency: "KRW", reason: "x" },
      }),
      401,
      "auth_required",
    );
    const reader = await scopedKey(t.app, u.token, ["billing:read"]);
    assert.equal((await call(t.app, { url: "/v1/billing/bank-transfers", token: reader })).statusCode, 200);
    assert.equal((await call(t.app, { url: "/v1/billing/bank-transfer/config", token: reader })).statusCode, 200);
    expectError(
      await create(reader, { amount_krw: 100_000, depositor_name: "홍길동", receipt_type: "none" }),
      403,
      "scope_insufficient",
    );
    expectError(await action(reader, a.id, "cancel"), 403, "scope_insufficient");
    const writer = await scopedKey(t.app, u.token, ["billing:write"]);
    assert.equal((await action(writer, a.id, "deposit-reported")).statusCode, 200);
  });

  describe("operator credit", () => {
    test("an adjustment entry credits the wallet in ledger units with the reason as memo", async () => {
      const u = await signup(t.app);
      const res = await call(t.app, {
        method: "POST",
        url: `/v1/operator/accounts/${u.id}/credit`,
        token: OPERATOR_TOKEN,
        body: { amount: 5_000_000, currency: "USD", reason: "goodwill for outage #12" },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().balance, 5_000_000);
      assert.equal(await balance(u.id, "USD"), 5_000_000);
      const { rows } = await t.db.query("SELECT source_type, memo FROM ledger_transactions WHERE id = $1", [
        res.json().transaction_id,
      ]);
      assert.deepEqual(rows, [{ source_type: "adjustment", memo: "goodwill for outage #12" }]);
      const second = await call(t.app, {
        method: "POST",
        url: `/v1/operator/accounts/${u.id}/credit`,
        token: OPERATOR_TOKEN,
        body: { amount: 1000, currency: "KRW", reason: "test" },
      });
      assert.equal(second.json().balance, 1000);
    });

    test("a retried request with the same Idempotency-Key credits once", async () => {
      const u = await signup(t.app);
      const send = () =>
        call(t.app, {
          method: "POST",
          url: `/v1/operator/accounts/${u.id}/credit`,
          token: OPERATOR_TOKEN,
          headers: { "idempotency-key": `credit-${u.id}` },
          body: { amount: 7000, currency: "KRW", reason: "refund of invoice 7" },
        });
      const [a, b] = await Promise.all([send(), send()]);
      assert.equal(a.statusCode, 201);
      assert.equal(b.statusCode, 201);
      assert.equal(a.json().transaction_id, b.json().transaction_id);
      assert.equal(await balance(u.id), 7000);
    });

    test("errors: unknown account 404, zero or fractional amount 400, unknown currency 400, no reason 400", async () => {
      const u = await signup(t.app);
      const credit = (id: string, body: unknown) =>
        call(t.app, { method: "POST", url: `/v1/operator/accounts/${id}/credit`, token: OPERATOR_TOKEN, body });
      expectError(await credit(randomUUID(), { amount: 1, currency: "KRW", reason: "x" }), 404, "not_found");
      expectError(await credit(u.id, { amount: 0, currency: "KRW", reason: "x" }), 400, "invalid_request");
      expectError(await credit(u.id, { amount: 1.5, currency: "KRW", reason: "x" }), 400, "invalid_request");
      expectError(await credit(u.id, { amount: 1, currency: "EUR", reason: "x" }), 400, "invalid_request");
      expectError(await credit(u.id, { amount: 1, currency: "KRW" }), 400, "invalid_request");
      assert.equal(await balance(u.id), 0);
    });
  });
});
