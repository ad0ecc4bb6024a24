import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup } from "../helpers/app.js";
import { startPaymentsApp, TOSS_WEBHOOK_KEY, type PaymentsTestApp } from "../fakes/payments-app.js";

describe("payment webhooks", () => {
  let p: PaymentsTestApp;
  before(async () => {
    p = await startPaymentsApp();
  });
  after(async () => {
    await p.close();
  });

  const createTopup = async (token: string, body: unknown) => {
    const res = await call(p.t.app, { method: "POST", url: "/v1/billing/topups", token, body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const get = async (token: string, id: string) =>
    (await call(p.t.app, { url: `/v1/billing/topups/${id}`, token })).json();
  const confirm = (token: string, id: string, body: unknown = {}) =>
    call(p.t.app, { method: "POST", url: `/v1/billing/topups/${id}/confirm`, token, body });
  const paidStripeTopup = async (token: string, amount = 1000) => {
    const topup = await createTopup(token, { amount, currency: "USD", provider: "stripe" });
    const pi = p.stripe.completeClientSide(topup.provider_ref);
    return { topup, pi };
  };
  const paidTossTopup = async (token: string, amount = 30_000) => {
    const topup = await createTopup(token, { amount, currency: "KRW", provider: "toss" });
    const paymentKey = p.toss.authorize(topup.order_id, amount);
    const res = await confirm(token, topup.id, { payment_key: paymentKey });
    assert.equal(res.json().status, "succeeded", res.body);
    return { topup, paymentKey };
  };

  describe("stripe: signature", () => {
    test("a valid event is applied: payment_intent.succeeded credits the top-up before any confirm call", async () => {
      const u = await signup(p.t.app);
      const { topup, pi } = await paidStripeTopup(u.token, 1500);
      const res = await p.sendStripe(p.stripe.event("payment_intent.succeeded", pi));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { received: true, applied: true });
      assert.equal((await get(u.token, topup.id)).status, "succeeded");
      assert.equal(await p.balance(u.id, "USD"), 15_000_000);
      // the confirm call that comes later finds it done and credits nothing more
      assert.equal((await confirm(u.token, topup.id)).json().status, "succeeded");
      assert.equal(await p.balance(u.id, "USD"), 15_000_000);
    });

    test("bad signatures are 400 invalid_signature and apply nothing: wrong secret, altered body, outside tolerance, missing header, garbage", async () => {
      const u = await signup(p.t.app);
      const { topup, pi } = await paidStripeTopup(u.token);
      const event = p.stripe.event("payment_intent.succeeded", pi);
      const payload = JSON.stringify(event);
      const attempts = [
        p.sendStripe(payload, {
          signature: p.stripe.sign(payload, { secret: "whsec_wrongwrongwrongwrong" }),
          record: false,
        }),
        p.sendStripe(payload.replace('"amount":1000', '"amount":9000'), {
          signature: p.stripe.sign(payload),
          record: false,
        }),
        p.sendStripe(payload, {
          signature: p.stripe.sign(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
          record: false,
        }),
        p.sendStripe(payload, { signature: "t=123,v1=deadbeef", record: false }),
        p.sendStripe(payload, { signature: "", record: false }),
        call(p.t.app, {
          method: "POST",
          url: "/v1/billing/stripe/webhook",
          headers: { "content-type": "application/json" },
          body: payload,
        }),
      ];
      for (const res of await Promise.all(attempts)) expectError(res, 400, "invalid_signature");
      assert.equal((await get(u.token, topup.id)).status, "pending");
      assert.equal(await p.balance(u.id, "USD"), 0);
      const { rows } = await p.t.db.query("SELECT 1 FROM billing_webhook_events WHERE event_id = $1", [event.id]);
      assert.equal(rows.length, 0, "a refused event is not recorded, so its genuine delivery still applies");
      assert.equal((await p.sendStripe(event)).json().applied, true);
      assert.equal(await p.balance(u.id, "USD"), 10_000_000);
    });

    test("the signature covers the exact bytes: re-serialised JSON with other whitespace does not verify", async () => {
      const u = await signup(p.t.app);
      const { pi } = await paidStripeTopup(u.token);
      const event = p.stripe.event("payment_intent.succeeded", pi);
      const pretty = JSON.stringify(event, null, 2);
      expectError(
        await p.sendStripe(pretty, { signature: p.stripe.sign(JSON.stringify(event)), record: false }),
        400,
        "invalid_signature",
      );
      assert.equal((await p.sendStripe(pretty)).statusCode, 200, "the same pretty bytes, signed, verify");
    });

    test("only the webhook route keeps raw bodies: other routes still reject bad JSON with bad_json", async () => {
      const u = await signup(p.t.app);
      const res = await call(p.t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: u.token,
        headers: { "content-type": "application/json" },
        body: "{not json",
      });
      expectError(res, 400, "bad_json");
    });

    test("each event id applies once: a redelivery answers applied:false", async () => {
      const u = await signup(p.t.app);
      const { pi } = await paidStripeTopup(u.token);
      const event = p.stripe.event("payment_intent.succeeded", pi);
      assert.equal((await p.sendStripe(event)).json().applied, true);
      const again = await p.sendStripe(event);
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().applied, false);
      assert.equal(await p.balance(u.id, "USD"), 10_000_000);
    });

    test("events for nothing of ours, and types we do not handle, are acknowledged and recorded", async () => {
      const strangerPi = {
        id: "pi_stranger",
        object: "payment_intent",
        amount: 100,
        amount_received: 100,
        currency: "usd",
        status: "succeeded",
        metadata: {},
      };
      const a = await p.sendStripe(p.stripe.event("payment_intent.succeeded", strangerPi));
      assert.deepEqual(a.json(), { received: true, applied: false });
      const b = await p.sendStripe(p.stripe.event("customer.created", { id: "cus_x", object: "customer" }));
      assert.deepEqual(b.json(), { received: true, applied: false });
    });

    test("an event whose amount differs from the top-up is not credited", async () => {
      const u = await signup(p.t.app);
      const { topup, pi } = await paidStripeTopup(u.token, 1000);
      const res = await p.sendStripe(
        p.stripe.event("payment_intent.succeeded", { ...pi, amount: 99_999, amount_received: 99_999 }),
      );
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().applied, false);
      assert.equal((await get(u.token, topup.id)).status, "pending");
      assert.equal(await p.balance(u.id, "USD"), 0);
    });
  });

  describe("stripe: top-up outcomes and refunds", () => {
    test("charge.refunded posts a refund entry for what was refunded, partial then full; the top-up ends refunded", async () => {
      const u = await signup(p.t.app);
      const { topup, pi } = await paidStripeTopup(u.token, 2000);
      await p.sendStripe(p.stripe.event("payment_intent.succeeded", pi));
      assert.equal(await p.balance(u.id, "USD"), 20_000_000);

      const partial = p.stripe.refund(pi.id, 500);
      assert.equal((await p.sendStripe(p.stripe.event("charge.refunded", partial))).json().applied, true);
      assert.equal(await p.balance(u.id, "USD"), 15_000_000);
      let view = await get(u.token, topup.id);
      assert.equal(view.refunded_amount, 500);
      assert.equal(view.status, "succeeded");

      const full = p.stripe.refund(pi.id);
      await p.sendStripe(p.stripe.event("charge.refunded", full));
      assert.equal(await p.balance(u.id, "USD"), 0);
      view = await get(u.token, topup.id);
      assert.equal(view.status, "refunded");
      assert.equal(view.refunded_amount, 2000);

      // an older event arriving late (a smaller cumulative refund) changes nothing
      await p.sendStripe(p.stripe.event("charge.refunded", partial));
      assert.equal(await p.balance(u.id, "USD"), 0);
      const postings = await p.postings(`topup:${topup.id}`);
      assert.deepEqual(
        postings.map((x) => [x.source_type, x.amount]),
        [
          ["topup", 20_000_000],
          ["refund", -5_000_000],
          ["refund", -15_000_000],
        ],
      );
    });

    test("a refund arriving before the success credits first, then refunds; a refund of spent money leaves the wallet negative", async () => {
      const u = await signup(p.t.app);
      const { topup, pi } = await paidStripeTopup(u.token, 1000);
      const refunded = p.stripe.refund(pi.id, 1000);
      await p.sendStripe(p.stripe.event("charge.refunded", refunded));
      assert.equal((await get(u.token, topup.id)).status, "refunded");
      assert.equal(await p.balance(u.id, "USD"), 0);
      await p.sendStripe(p.stripe.event("payment_intent.succeeded", pi));
      assert.equal(await p.balance(u.id, "USD"), 0, "the late success does not credit again");

      // spent, then refunded: the refund is recorded anyway and the prepaid wallet goes overdue
      const v = await signup(p.t.app);
      const paid = await paidStripeTopup(v.token, 1000);
      await p.sendStripe(p.stripe.event("payment_intent.succeeded", paid.pi));
      const {
        rows: [w],
      } = await p.t.db.query<{ id: string }>(
        "SELECT id FROM ledger_wallets WHERE owner_kind = 'account' AND owner_id = $1 AND currency = 'USD'",
        [v.id],
      );
      const { post, systemWallet } = await import("../../src/billing/ledger/ledger.js");
      const revenue = await systemWallet(p.t.db, "revenue", "USD");
      await post(p.t.db, {
        currency: "USD",
        source: { type: "usage", id: "test" },
        idempotencyKey: `spend-${v.id}`,
        legs: [
          { walletId: w.id, amount: -8_000_000 },
          { walletId: revenue.id, amount: 8_000_000 },
        ],
      });
      await p.sendStripe(p.stripe.event("charge.refunded", p.stripe.refund(paid.pi.id)));
      assert.equal(await p.balance(v.id, "USD"), -8_000_000);
    });

    test("payment_intent.payment_failed records the failure on a pending top-up; payment_intent.canceled fails it", async () => {
      const u = await signup(p.t.app);
      const topup = await createTopup(u.token, { amount: 1000, currency: "USD", provider: "stripe" });
      const pi = p.stripe.paymentIntents.get(topup.provider_ref);
      const failedPi = {
        ...pi,
        status: "requires_payment_method",
        last_payment_error: {
          type: "card_error",
          code: "card_declined",
          decline_code: "insufficient_funds",
          message: "Your card has insufficient funds.",
        },
      };
      await p.sendStripe(p.stripe.event("payment_intent.payment_failed", failedPi));
      let view = await get(u.token, topup.id);
      assert.equal(view.status, "pending", "the customer may still pay with another card");
      assert.equal(view.failure.code, "insufficient_funds");
      await p.sendStripe(
        p.stripe.event("payment_intent.canceled", { ...pi, status: "canceled", cancellation_reason: "abandoned" }),
      );
      view = await get(u.token, topup.id);
      assert.equal(view.status, "failed");
      assert.equal(view.failure.code, "canceled");
      expectError(await confirm(u.token, topup.id), 409, "topup_not_pending");
    });
  });

  describe("toss", () => {
    test("the key is checked in constant time: missing or wrong is 401 and nothing is fetched or applied", async () => {
      const u = await signup(p.t.app);
      const { topup, paymentKey } = await paidTossTopup(u.token);
      p.toss.cancel(paymentKey);
      const fetchesBefore = p.toss.requests.filter((r) => r.method === "GET").length;
      expectError(await p.sendToss(paymentKey, { key: null, record: false }), 401, "auth_required");
      expectError(
        await p.sendToss(paymentKey, { key: "wrong-key-0123456789abcdef", record: false }),
        401,
        "auth_required",
      );
      expectError(await p.sendToss(paymentKey, { key: TOSS_WEBHOOK_KEY + "x", record: false }), 401, "auth_required");
      assert.equal(p.toss.requests.filter((r) => r.method === "GET").length, fetchesBefore);
      assert.equal((await get(u.token, topup.id)).status, "succeeded");
      assert.equal(await p.balance(u.id, "KRW"), 30_000);
    });

    test("cancellations come from what Toss says: partial then full refund entries", async () => {
      const u = await signup(p.t.app);
      const { topup, paymentKey } = await paidTossTopup(u.token, 30_000);
      p.toss.cancel(paymentKey, 10_000);
      const res = await p.sendToss(paymentKey);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { received: true, applied: true });
      assert.equal(await p.balance(u.id, "KRW"), 20_000);
      let view = await get(u.token, topup.id);
      assert.equal(view.provider_status, "PARTIAL_CANCELED");
      assert.equal(view.refunded_amount, 10_000);
      // the re-fetch went to Toss with the secret key
      const fetch = p.toss.requests
        .filter((r) => r.method === "GET" && r.path === `/v1/payments/${paymentKey}`)
        .at(-1)!;
      assert.equal(fetch.headers.authorization, "Basic " + Buffer.from(`${p.toss.secretKey}:`).toString("base64"));

      p.toss.cancel(paymentKey);
      await p.sendToss(paymentKey);
      assert.equal(await p.balance(u.id, "KRW"), 0);
      view = await get(u.token, topup.id);
      assert.equal(view.status, "refunded");
      assert.equal(view.provider_status, "CANCELED");
    });

    test("the body is not believed: a forged CANCELED body for a DONE payment changes nothing", async () => {
      const u = await signup(p.t.app);
      const { topup, paymentKey } = await paidTossTopup(u.token, 30_000);
      const forged = p.toss.webhookBody(paymentKey);
      forged.data.status = "CANCELED";
      forged.data.balanceAmount = 0;
      forged.data.cancels = [{ cancelAmount: 30_000, transactionKey: "x", canceledAt: new Date().toISOString() }];
      const res = await p.sendToss(paymentKey, { body: forged });
      assert.equal(res.statusCode, 200);
      assert.equal((await get(u.token, topup.id)).status, "succeeded");
      assert.equal(await p.balance(u.id, "KRW"), 30_000);
    });

    test("a webhook before the confirm call credits from Toss's DONE; unknown payments are acknowledged; a body without paymentKey is 400", async () => {
      const u = await signup(p.t.app);
      const topup = await createTopup(u.token, { amount: 15_000, currency: "KRW", provider: "toss" });
      const paymentKey = p.toss.authorize(topup.order_id, 15_000);
      // still only authorised: nothing to apply yet
      assert.equal((await p.sendToss(paymentKey)).statusCode, 200);
      assert.equal(await p.balance(u.id, "KRW"), 0);
      p.toss.payments.get(paymentKey).status = "DONE";
      await p.sendToss(paymentKey);
      assert.equal((await get(u.token, topup.id)).status, "succeeded");
      assert.equal((await confirm(u.token, topup.id, { payment_key: paymentKey })).json().status, "succeeded");
      assert.equal(await p.balance(u.id, "KRW"), 15_000);

      const unknown = await p.sendToss("tgen_nosuch", {
        body: { eventType: "PAYMENT_STATUS_CHANGED", data: { paymentKey: "tgen_nosuch" } },
        record: false,
      });
      assert.deepEqual(unknown.json(), { received: true, applied: false });
      expectError(
        await p.sendToss("x", { body: { eventType: "PAYMENT_STATUS_CHANGED", data: {} }, record: false }),
        400,
        "invalid_request",
      );
    });

    test("Toss unreachable during a webhook: 502 so Toss delivers again, nothing applied", async () => {
      const u = await signup(p.t.app);
      const { topup, paymentKey } = await paidTossTopup(u.token, 30_000);
      p.toss.cancel(paymentKey);
      p.toss.failNext(1);
      expectError(await p.sendToss(paymentKey, { record: false }), 502, "provider_error");
      assert.equal((await get(u.token, topup.id)).status, "succeeded");
      await p.sendToss(paymentKey);
      assert.equal((await get(u.token, topup.id)).status, "refunded");
    });
  });
});
