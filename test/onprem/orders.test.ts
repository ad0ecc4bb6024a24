import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup } from "../helpers/app.js";
import { makeOrg } from "../orgs/lib.js";
import { acceptTerms, approve, get, post, readyAccount, startOnpremApp, type OnpremApp } from "./lib.js";

const PRICE = 100_000;

describe("on-premises orders paid through Toss", () => {
  let o: OnpremApp;
  before(async () => {
    o = await startOnpremApp();
  });
  after(async () => {
    await o.close();
  });
  const order = (token: string, body: Record<string, unknown>) =>
    post(o.t, "/v1/onprem/orders", token, { customer: "Acme", scope: "me", ...body });
  const confirm = (token: string, id: string, body: Record<string, unknown>) =>
    post(o.t, `/v1/onprem/orders/${id}/confirm`, token, body);
  /** the payment window ran with the order's parameters: Toss holds a READY payment for them */
  const paid = (p: { order_id: string; amount: number }) => o.toss.authorize(p.order_id, p.amount);
  const sales = async (orderId: string) =>
    (
      await o.t.db.query<{ source_type: string; owner_id: string; amount: number }>(
        `SELECT t.source_type, w.owner_id, e.amount FROM ledger_transactions t
           JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_wallets w ON w.id = e.wallet_id
          WHERE t.idempotency_key = $1 ORDER BY w.owner_id`,
        [`onprem-order:${orderId}:sale`],
      )
    ).rows;
  const licensesOfOrder = async (orderId: string) =>
    (await o.t.db.query("SELECT id FROM onprem_licenses WHERE order_id = $1", [orderId])).rows;

  test("the server computes the amount and returns the Toss payment parameters; confirm issues the license and records the sale", async () => {
    const u = await readyAccount(o.t);
    const res = await order(u.token, { hosts: 3, months: 6, amount_krw: 1 });
    expectError(res, 400, "invalid_request"); // the client never names the amount
    const created = await order(u.token, { hosts: 3, months: 6 });
    assert.equal(created.statusCode, 201, created.body);
    const ord = created.json();
    assert.equal(ord.status, "pending");
    assert.equal(ord.amount_krw, 3 * 6 * PRICE);
    assert.equal(ord.license_id, null);
    assert.equal(ord.payment.provider, "toss");
    assert.equal(ord.payment.amount, 3 * 6 * PRICE);
    assert.equal(ord.payment.order_id, `onprem-${ord.id}`);
    assert.match(ord.payment.order_name, /3 hosts x 6 months/);
    assert.match(ord.payment.customer_key, /^onprem_[A-Za-z0-9_-]{32}$/);
    assert.equal(ord.payment.client_key, "test_ck_onprem_0123456789");
    // the customer key is stable per owner
    const second = (await order(u.token, { hosts: 1, months: 1 })).json();
    assert.equal(second.payment.customer_key, ord.payment.customer_key);
    assert.deepEqual((await get(o.t, `/v1/onprem/orders/${ord.id}`, u.token)).json(), ord);

    const paymentKey = paid(ord.payment);
    const ok = await confirm(u.token, ord.id, {
      payment_key: paymentKey,
      order_id: ord.payment.order_id,
      amount_krw: ord.amount_krw,
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const done = ok.json();
    assert.equal(done.status, "paid");
    assert.ok(done.paid_at);
    assert.ok(done.license_id);
    assert.equal(o.toss.payments.get(paymentKey).status, "DONE");

    const license = (await get(o.t, "/v1/onprem/licenses", u.token))
      .json()
      .find((l: { id: string }) => l.id === done.license_id);
    assert.equal(license.kind, "paid");
    assert.equal(license.hosts, 3);
    assert.equal(license.order_id, ord.id);
    assert.deepEqual(license.features, ["standard"]);
    const start = new Date(license.not_before);
    const end = new Date(license.not_after);
    assert.equal((end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth(), 6);
    // the sale: Toss holds the money (payments-clearing), the platform earned it (revenue)
    assert.deepEqual(
      (await sales(ord.id)).map((r) => [r.source_type, r.owner_id, r.amount]),
      [
        ["invoice", "payments-clearing", -ord.amount_krw],
        ["invoice", "revenue", ord.amount_krw],
      ],
    );
    // confirming again answers the paid order and changes nothing; another key for it is refused
    const again = await confirm(u.token, ord.id, {
      payment_key: paymentKey,
      order_id: ord.payment.order_id,
      amount_krw: ord.amount_krw,
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().license_id, done.license_id);
    expectError(
      await confirm(u.token, ord.id, {
        payment_key: "tgen_other",
        order_id: ord.payment.order_id,
        amount_krw: ord.amount_krw,
      }),
      409,
      "conflict",
    );
    assert.equal((await licensesOfOrder(ord.id)).length, 1);
    assert.equal((await sales(ord.id)).length, 2);
  });

  test("an amount or order id that does not match the order is 400 and nothing is confirmed or issued", async () => {
    const u = await readyAccount(o.t);
    const ord = (await order(u.token, { hosts: 2, months: 1 })).json();
    const paymentKey = paid(ord.payment);
    const before = o.toss.requests.length;
    expectError(
      await confirm(u.token, ord.id, { payment_key: paymentKey, order_id: ord.payment.order_id, amount_krw: 1000 }),
      400,
      "invalid_request",
    );
    expectError(
      await confirm(u.token, ord.id, {
        payment_key: paymentKey,
        order_id: "onprem-someone-else",
        amount_krw: ord.amount_krw,
      }),
      400,
      "invalid_request",
    );
    assert.equal(o.toss.requests.length, before, "Toss was not asked");
    assert.notEqual(o.toss.payments.get(paymentKey).status, "DONE");
    assert.equal((await get(o.t, `/v1/onprem/orders/${ord.id}`, u.token)).json().status, "pending");
    assert.equal((await licensesOfOrder(ord.id)).length, 0);
    assert.equal((await sales(ord.id)).length, 0);

    // the payment window ran with another amount: Toss refuses the confirm, the order records it and stays pending
    const other = (await order(u.token, { hosts: 1, months: 1 })).json();
    const cheap = o.toss.authorize(other.payment.order_id, 10);
    expectError(
      await confirm(u.token, other.id, {
        payment_key: cheap,
        order_id: other.payment.order_id,
        amount_krw: other.amount_krw,
      }),
      400,
      "payment_rejected",
    );
    const failed = (await get(o.t, `/v1/onprem/orders/${other.id}`, u.token)).json();
    assert.equal(failed.status, "pending");
    assert.equal(failed.failure.code, "INVALID_REQUEST");
    assert.equal((await licensesOfOrder(other.id)).length, 0);
    // a paymentKey of another order is refused too
    expectError(
      await confirm(u.token, other.id, {
        payment_key: paymentKey,
        order_id: other.payment.order_id,
        amount_krw: other.amount_krw,
      }),
      400,
      "invalid_payment_key",
    );
    expectError(
      await confirm(u.token, other.id, {
        payment_key: "tgen_unknown",
        order_id: other.payment.order_id,
        amount_krw: other.amount_krw,
      }),
      400,
      "invalid_payment_key",
    );
  });

  test("concurrent confirms of one order issue exactly one license and one ledger posting", async () => {
    const u = await readyAccount(o.t);
    const ord = (await order(u.token, { hosts: 5, months: 12 })).json();
    const paymentKey = paid(ord.payment);
    const body = { payment_key: paymentKey, order_id: ord.payment.order_id, amount_krw: ord.amount_krw };
    const results = await Promise.all(Array.from({ length: 8 }, () => confirm(u.token, ord.id, body)));
    for (const r of results) assert.equal(r.statusCode, 200, r.body);
    const licenseIds = new Set(results.map((r) => r.json().license_id));
    assert.equal(licenseIds.size, 1);
    assert.equal((await licensesOfOrder(ord.id)).length, 1);
    assert.equal((await sales(ord.id)).length, 2, "one posting of two legs");
    const confirms = o.toss.requests.filter((r) => r.path === "/v1/payments/confirm" && r.raw?.includes(paymentKey));
    assert.ok(confirms.length >= 2, `the confirms raced at Toss (${confirms.length} reached it)`);
  });

  test("renew_of extends from the old license's end; an expired one is renewed from now", async () => {
    const u = await readyAccount(o.t);
    const buy = async (body: Record<string, unknown>) => {
      const ord = (await order(u.token, body)).json();
      assert.ok(ord.id, JSON.stringify(ord));
      const res = await confirm(u.token, ord.id, {
        payment_key: paid(ord.payment),
        order_id: ord.payment.order_id,
        amount_krw: ord.amount_krw,
      });
      assert.equal(res.statusCode, 200, res.body);
      const list = (await get(o.t, "/v1/onprem/licenses", u.token)).json();
      return { order: res.json(), license: list.find((l: { id: string }) => l.id === res.json().license_id) };
    };
    const first = await buy({ hosts: 2, months: 3 });
    const renewal = await buy({ hosts: 4, months: 1, renew_of: first.license.id });
    assert.equal(renewal.order.renew_of, first.license.id);
    assert.equal(renewal.license.renews, first.license.id);
    assert.equal(renewal.license.not_before, first.license.not_after);
    assert.equal(renewal.license.status, "scheduled");
    assert.equal(renewal.license.hosts, 4);

    await o.t.db.query(
      "UPDATE onprem_licenses SET not_before = now() - interval '60 days', not_after = now() - interval '1 day' WHERE id = $1",
      [first.license.id],
    );
    const late = await buy({ hosts: 2, months: 1, renew_of: first.license.id });
    assert.ok(Math.abs(Date.parse(late.license.not_before) - Date.now()) < 60_000, "from now");
    assert.equal(late.license.status, "active");

    const stranger = await readyAccount(o.t);
    expectError(await order(stranger.token, { hosts: 1, months: 1, renew_of: first.license.id }), 404, "not_found");
  });

  test("months and hosts follow the pricing; orders of an organization need an admin; others' orders are 404", async () => {
    const u = await readyAccount(o.t);
    expectError(await order(u.token, { hosts: 1, months: 2 }), 400, "invalid_request");
    expectError(await order(u.token, { hosts: 1001, months: 1 }), 400, "invalid_request");
    expectError(await order(u.token, { hosts: 0, months: 1 }), 400, "invalid_request");

    const org = await makeOrg(o.t, { admins: 1, members: 1 });
    const [admin, member] = [org.admins[0], org.members[0]];
    await approve(o.t, admin.token, "org");
    await acceptTerms(o.t, admin.token);
    await acceptTerms(o.t, member.token);
    expectError(await order(member.token, { hosts: 1, months: 1, scope: "org" }), 403, "forbidden_role");
    const ord = (await order(admin.token, { hosts: 1, months: 1, scope: "org" })).json();
    assert.deepEqual(ord.owner, { kind: "org", id: org.id });
    // members see it; only an admin or the owner confirms; strangers get 404
    assert.equal((await get(o.t, `/v1/onprem/orders/${ord.id}`, member.token)).statusCode, 200);
    const body = { payment_key: paid(ord.payment), order_id: ord.payment.order_id, amount_krw: ord.amount_krw };
    expectError(await confirm(member.token, ord.id, body), 403, "forbidden_role");
    expectError(await get(o.t, `/v1/onprem/orders/${ord.id}`, u.token), 404, "not_found");
    expectError(await confirm(u.token, ord.id, body), 404, "not_found");
    const ok = await confirm(org.owner.token, ord.id, body);
    assert.equal(ok.statusCode, 200, ok.body);
    const list = (await get(o.t, "/v1/onprem/licenses", member.token)).json();
    assert.ok(list.some((l: { id: string; scope: string }) => l.id === ok.json().license_id && l.scope === "org"));
    expectError(await get(o.t, "/v1/onprem/orders/00000000-0000-4000-8000-000000000000", u.token), 404);
  });

  test("without Toss configured an order answers 503 provider_unavailable", async () => {
    const bare = await createTestApp();
    try {
      const u = await signup(bare.app);
      await approve(bare, u.token);
      await acceptTerms(bare, u.token);
      const res = await call(bare.app, {
        method: "POST",
        url: "/v1/onprem/orders",
        token: u.token,
        body: { hosts: 1, months: 1, customer: "A" },
      });
      expectError(res, 503, "provider_unavailable");
    } finally {
      await bare.close();
    }
  });
});
