import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { call, createTestApp, expectError, scopedKey, signup } from "../helpers/app.js";
import { startPaymentsApp, type PaymentsTestApp } from "../fakes/payments-app.js";

describe("payments: top-ups", () => {
  let p: PaymentsTestApp;
  before(async () => {
    p = await startPaymentsApp();
  });
  after(async () => {
    await p.close();
  });

  const createTopup = (token: string, body: unknown) =>
    call(p.t.app, { method: "POST", url: "/v1/billing/topups", token, body });
  const confirm = (token: string, id: string, body: unknown = {}) =>
    call(p.t.app, { method: "POST", url: `/v1/billing/topups/${id}/confirm`, token, body });
  const get = (token: string, id: string) => call(p.t.app, { url: `/v1/billing/topups/${id}`, token });

  describe("stripe (USD through PaymentIntents)", () => {
    test("create answers a pending top-up with the PaymentIntent's client_secret; the wallet is untouched", async () => {
      const u = await signup(p.t.app);
      const res = await createTopup(u.token, { amount: 2500, currency: "USD", provider: "stripe" });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.equal(body.status, "pending");
      assert.equal(body.amount, 2500);
      assert.equal(body.credit_amount, 25_000_000, "25 USD in micro-dollars");
      assert.equal(body.origin, "manual");
      const pi = p.stripe.paymentIntents.get(body.provider_ref);
      assert.ok(pi, "a PaymentIntent exists at Stripe");
      assert.equal(pi.amount, 2500);
      assert.equal(pi.currency, "usd");
      assert.equal(pi.metadata.topup_id, body.id);
      assert.equal(body.client_secret, pi.client_secret);
      assert.equal(await p.balance(u.id, "USD"), 0);
      assert.deepEqual((await get(u.token, body.id)).json(), body);
    });

    test("confirm after Stripe.js paid credits the wallet once; confirming again changes nothing", async () => {
      const u = await signup(p.t.app);
      const topup = (await createTopup(u.token, { amount: 1000, currency: "USD", provider: "stripe" })).json();
      // not paid yet: confirm reports pending and credits nothing
      const early = await confirm(u.token, topup.id);
      assert.equal(early.statusCode, 200, early.body);
      assert.equal(early.json().status, "pending");
      assert.equal(early.json().provider_status, "requires_payment_method");
      assert.equal(await p.balance(u.id, "USD"), 0);

      p.stripe.completeClientSide(topup.provider_ref);
      const res = await confirm(u.token, topup.id);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, "succeeded");
      assert.ok(res.json().credited_at);
      assert.equal(await p.balance(u.id, "USD"), 10_000_000);
      for (let i = 0; i < 3; i++) assert.equal((await confirm(u.token, topup.id)).json().status, "succeeded");
      assert.equal(await p.balance(u.id, "USD"), 10_000_000);
      const postings = await p.postings(`topup:${topup.id}`);
      assert.equal(postings.length, 1);
      assert.equal(postings[0].source_type, "topup");
    });

    test("confirm with a payment_method confirms server-side; a declined card is 402 payment_failed and may be retried with another", async () => {
      const u = await signup(p.t.app);
      const topup = (await createTopup(u.token, { amount: 700, currency: "USD", provider: "stripe" })).json();
      const declined = await confirm(u.token, topup.id, { payment_method: p.stripe.createCard({ decline: true }) });
      expectError(declined, 402, "payment_failed");
      const afterDecline = (await get(u.token, topup.id)).json();
      assert.equal(afterDecline.status, "pending");
      assert.equal(afterDecline.failure.code, "generic_decline");
      assert.equal(await p.balance(u.id, "USD"), 0);

      const ok = await confirm(u.token, topup.id, { payment_method: p.stripe.createCard() });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().status, "succeeded");
      assert.equal(ok.json().failure, null);
      assert.equal(await p.balance(u.id, "USD"), 7_000_000);
    });

    test("an unknown payment_method is 400 invalid_payment_method; payment_key on a stripe top-up is 400", async () => {
      const u = await signup(p.t.app);
      const topup = (await createTopup(u.token, { amount: 700, currency: "USD", provider: "stripe" })).json();
      expectError(await confirm(u.token, topup.id, { payment_method: "pm_nosuch" }), 400, "invalid_payment_method");
      expectError(await confirm(u.token, topup.id, { payment_key: "tgen_x" }), 400, "invalid_request");
    });

    test("Stripe failing is 502 provider_error and the top-up is recorded as failed", async () => {
      const u = await signup(p.t.app);
      p.stripe.failNext(3); // the SDK retries twice
      const res = await createTopup(u.token, { amount: 700, currency: "USD", provider: "stripe" });
      expectError(res, 502, "provider_error");
      const { rows } = await p.t.db.query("SELECT status, failure_code FROM billing_topups WHERE account_id = $1", [
        u.id,
      ]);
      assert.deepEqual(rows, [{ status: "failed", failure_code: "provider_error" }]);
    });
  });

  describe("toss (KRW through the confirm API)", () => {
    test("create gives the order for the payment window; confirm with the paymentKey credits KRW once", async () => {
      const u = await signup(p.t.app);
      const res = await createTopup(u.token, { amount: 50_000, currency: "KRW", provider: "toss" });
      assert.equal(res.statusCode, 201, res.body);
      const topup = res.json();
      assert.equal(topup.status, "pending");
      assert.equal(topup.client_secret, null);
      assert.match(topup.order_id, /^[A-Za-z0-9_-]{6,64}$/, "a valid Toss orderId");
      assert.equal(topup.credit_amount, 50_000);

      const paymentKey = p.toss.authorize(topup.order_id, 50_000);
      const ok = await confirm(u.token, topup.id, { payment_key: paymentKey });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().status, "succeeded");
      assert.equal(ok.json().provider_ref, paymentKey);
      assert.equal(ok.json().provider_status, "DONE");
      assert.equal(await p.balance(u.id, "KRW"), 50_000);

      // the confirm call carried Basic auth of the secret key and our own amount
      const sent = p.toss.requests.find((r) => r.path === "/v1/payments/confirm")!;
      assert.equal(sent.headers.authorization, "Basic " + Buffer.from(`${p.toss.secretKey}:`).toString("base64"));
      assert.deepEqual(JSON.parse(sent.raw), { paymentKey, orderId: topup.order_id, amount: 50_000 });

      // again, with or without the key: Toss says already processed, nothing more is credited
      assert.equal((await confirm(u.token, topup.id, { payment_key: paymentKey })).json().status, "succeeded");
      assert.equal((await confirm(u.token, topup.id)).json().status, "succeeded");
      assert.equal(await p.balance(u.id, "KRW"), 50_000);
    });

    test("a second confirm after the first was lost to the network settles from Toss's record", async () => {
      const u = await signup(p.t.app);
      const topup = (await createTopup(u.token, { amount: 20_000, currency: "KRW", provider: "toss" })).json();
      const paymentKey = p.toss.authorize(topup.order_id, 20_000);
      p.toss.payments.get(paymentKey).status = "DONE"; // Toss approved; our side never heard
      const res = await confirm(u.token, topup.id, { payment_key: paymentKey });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, "succeeded");
      assert.equal(await p.balance(u.id, "KRW"), 20_000);
    });

    test("confirm errors: no payment_key 400, a key of another order 400, another key after binding 409, a declined card 402 and failed", async () => {
      const u = await signup(p.t.app);
      const topup = (await createTopup(u.token, { amount: 10_000, currency: "KRW", provider: "toss" })).json();
      expectError(await confirm(u.token, topup.id), 400, "payment_key_required");
      expectError(await confirm(u.token, topup.id, { payment_method: "pm_x" }), 400, "invalid_request");
      const otherKey = p.toss.authorize(`other-${randomUUID()}`, 10_000);
      expectError(await confirm(u.token, topup.id, { payment_key: otherKey }), 400, "invalid_payment_key");
      expectError(await confirm(u.token, topup.id, { payment_key: "tgen_unknown" }), 400, "invalid_payment_key");
      assert.equal(await p.balance(u.id, "KRW"), 0);

      const key = p.toss.authorize(topup.order_id, 10_000);
      assert.equal((await confirm(u.token, topup.id, { payment_key: key })).json().status, "succeeded");
      expectError(await confirm(u.token, topup.id, { payment_key: otherKey }), 409, "payment_key_mismatch");

      const t2 = (await createTopup(u.token, { amount: 10_000, currency: "KRW", provider: "toss" })).json();
      const declinedKey = p.toss.authorize(t2.order_id, 10_000, { decline: true });
      expectError(await confirm(u.token, t2.id, { payment_key: declinedKey }), 402, "payment_failed");
      const failed = (await get(u.token, t2.id)).json();
      assert.equal(failed.status, "failed");
      assert.equal(failed.failure.code, "REJECT_CARD_PAYMENT");
      expectError(await confirm(u.token, t2.id, { payment_key: declinedKey }), 409, "topup_not_pending");
      assert.equal(await p.balance(u.id, "KRW"), 10_000);
    });

    test("an amount the window did not authorise is refused by Toss: 400 payment_rejected, nothing credited, still pending", async () => {
      const u = await signup(p.t.app);
      const topup = (await createTopup(u.token, { amount: 30_000, currency: "KRW", provider: "toss" })).json();
      const key = p.toss.authorize(topup.order_id, 3_000); // the window was tampered to charge less
      expectError(await confirm(u.token, topup.id, { payment_key: key }), 400, "payment_rejected");
      assert.equal((await get(u.token, topup.id)).json().status, "pending");
      assert.equal(await p.balance(u.id, "KRW"), 0);
    });
  });

  describe("validation and access", () => {
    test("currency must match the provider, amounts within limits, provider known", async () => {
      const u = await signup(p.t.app);
      expectError(
        await createTopup(u.token, { amount: 1000, currency: "KRW", provider: "stripe" }),
        400,
        "currency_not_supported",
      );
      expectError(
        await createTopup(u.token, { amount: 1000, currency: "USD", provider: "toss" }),
        400,
        "currency_not_supported",
      );
      expectError(
        await createTopup(u.token, { amount: 499, currency: "USD", provider: "stripe" }),
        400,
        "amount_out_of_range",
      );
      expectError(
        await createTopup(u.token, { amount: 500_001, currency: "USD", provider: "stripe" }),
        400,
        "amount_out_of_range",
      );
      expectError(
        await createTopup(u.token, { amount: 999, currency: "KRW", provider: "toss" }),
        400,
        "amount_out_of_range",
      );
      expectError(
        await createTopup(u.token, { amount: 5_000_001, currency: "KRW", provider: "toss" }),
        400,
        "amount_out_of_range",
      );
      expectError(
        await createTopup(u.token, { amount: 1000, currency: "KRW", provider: "paypal" }),
        400,
        "invalid_request",
      );
      expectError(
        await createTopup(u.token, { amount: 10.5, currency: "USD", provider: "stripe" }),
        400,
        "invalid_request",
      );
      expectError(
        await createTopup(u.token, { amount: "1000", currency: "KRW", provider: "toss" }),
        400,
        "invalid_request",
      );
      expectError(await createTopup(u.token, { amount: 1000, currency: "KRW" }), 400, "invalid_request");
      expectError(
        await createTopup(u.token, { amount: 1000, currency: "KRW", provider: "toss", extra: 1 }),
        400,
        "invalid_request",
      );
      const { rows } = await p.t.db.query("SELECT 1 FROM billing_topups WHERE account_id = $1", [u.id]);
      assert.equal(rows.length, 0, "nothing recorded for refused requests");
    });

    test("another account's top-up is 404; a malformed id is 400; no token is 401", async () => {
      const a = await signup(p.t.app);
      const b = await signup(p.t.app);
      const topup = (await createTopup(a.token, { amount: 10_000, currency: "KRW", provider: "toss" })).json();
      expectError(await get(b.token, topup.id), 404, "not_found");
      expectError(await confirm(b.token, topup.id, { payment_key: "x" }), 404, "not_found");
      expectError(await get(a.token, randomUUID()), 404, "not_found");
      expectError(await get(a.token, "nope"), 400, "invalid_request");
      expectError(await call(p.t.app, { url: `/v1/billing/topups/${topup.id}` }), 401, "auth_required");
    });

    test("billing:read reads, billing:write is needed to create and confirm", async () => {
      const u = await signup(p.t.app);
      const reader = await scopedKey(p.t.app, u.token, ["billing:read"]);
      const writer = await scopedKey(p.t.app, u.token, ["billing:write"]);
      const topup = (await createTopup(writer, { amount: 10_000, currency: "KRW", provider: "toss" })).json();
      assert.equal((await get(reader, topup.id)).statusCode, 200);
      expectError(
        await createTopup(reader, { amount: 10_000, currency: "KRW", provider: "toss" }),
        403,
        "scope_insufficient",
      );
      expectError(await confirm(reader, topup.id, { payment_key: "x" }), 403, "scope_insufficient");
      const other = await scopedKey(p.t.app, u.token, ["databases:*"]);
      expectError(await get(other, topup.id), 403, "scope_insufficient");
    });
  });
});

describe("payments: providers not configured", () => {
  test("top-ups and cards answer 503 provider_unavailable, webhooks 503 webhook_not_configured", async () => {
    const t = await createTestApp();
    try {
      const u = await signup(t.app);
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/billing/topups",
          token: u.token,
          body: { amount: 1000, currency: "USD", provider: "stripe" },
        }),
        503,
        "provider_unavailable",
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/billing/topups",
          token: u.token,
          body: { amount: 10_000, currency: "KRW", provider: "toss" },
        }),
        503,
        "provider_unavailable",
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/billing/cards",
          token: u.token,
          body: { provider: "stripe", payment_method: "pm_x" },
        }),
        503,
        "provider_unavailable",
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/billing/stripe/webhook",
          headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=x" },
          body: "{}",
        }),
        503,
        "webhook_not_configured",
      );
      expectError(
        await call(t.app, { method: "POST", url: "/v1/billing/toss/webhook?key=x", body: {} }),
        503,
        "webhook_not_configured",
      );
      expectError(
        await call(t.app, {
          method: "POST",
          url: "/v1/billing/bank-transfers",
          token: u.token,
          body: { amount_krw: 50_000, depositor_name: "홍길동", receipt_type: "none" },
        }),
        400,
        "bank_transfer_unavailable",
      );
    } finally {
      await t.close();
    }
  });
});
