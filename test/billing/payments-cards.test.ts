import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup } from "../helpers/app.js";
import { startPaymentsApp, type PaymentsTestApp } from "../fakes/payments-app.js";
import { runAutoRecharge } from "../../src/billing/payments/auto-recharge.js";

describe("saved cards and auto-recharge", () => {
  let p: PaymentsTestApp;
  before(async () => {
    p = await startPaymentsApp({ AUTO_RECHARGE_RETRY_SECONDS: "60", AUTO_RECHARGE_RETRY_MAX_SECONDS: "600" });
  });
  after(async () => {
    await p.close();
  });

  const saveCard = (token: string, body: unknown) =>
    call(p.t.app, { method: "POST", url: "/v1/billing/cards", token, body });
  const getCard = async (token: string) => (await call(p.t.app, { url: "/v1/billing/cards", token })).json().card;
  const getAuto = async (token: string) => {
    const res = await call(p.t.app, { url: "/v1/billing/auto-recharge", token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const putAuto = (token: string, body: unknown) =>
    call(p.t.app, { method: "PUT", url: "/v1/billing/auto-recharge", token, body });
  const autoTopups = async (accountId: string) =>
    (
      await p.t.db.query(
        "SELECT status, amount, failure_code FROM billing_topups WHERE account_id = $1 AND origin = 'auto_recharge' ORDER BY created_at",
        [accountId],
      )
    ).rows;

  describe("cards", () => {
    test("stripe: a payment method is attached to the account's customer; only reference and display data are stored", async () => {
      const u = await signup(p.t.app);
      assert.equal(await getCard(u.token), null);
      const pm = p.stripe.createCard({ brand: "visa", last4: "4242" });
      const res = await saveCard(u.token, { provider: "stripe", payment_method: pm });
      assert.equal(res.statusCode, 201, res.body);
      const { id: _id, created_at: _at, ...shown } = res.json() as Record<string, unknown>;
      assert.deepEqual(shown, { provider: "stripe", brand: "visa", last4: "4242", exp_month: 12, exp_year: 2034 });
      assert.deepEqual(await getCard(u.token), res.json());
      const customer = p.stripe.paymentMethods.get(pm).customer;
      assert.ok(customer && p.stripe.customers.get(customer).metadata.account_id === u.id);
      const { rows } = await p.t.db.query("SELECT * FROM billing_cards WHERE account_id = $1", [u.id]);
      assert.deepEqual(Object.keys(rows[0]).sort(), [
        "account_id",
        "brand",
        "created_at",
        "customer_ref",
        "deleted_at",
        "exp_month",
        "exp_year",
        "id",
        "last4",
        "owner_id",
        "owner_kind",
        "provider",
        "provider_ref",
      ]);

      // saving the same card again is a no-op; another card replaces it and the old one is detached at Stripe
      assert.equal((await saveCard(u.token, { provider: "stripe", payment_method: pm })).json().id, res.json().id);
      const pm2 = p.stripe.createCard({ brand: "mastercard", last4: "4444" });
      const second = await saveCard(u.token, { provider: "stripe", payment_method: pm2 });
      assert.equal(second.json().last4, "4444");
      assert.equal(p.stripe.paymentMethods.get(pm).customer, null);
      assert.equal(p.stripe.paymentMethods.get(pm2).customer, customer, "one customer per account");
    });

    test("stripe without payment_method starts a SetupIntent (202); setup_intent.succeeded saves the card", async () => {
      const u = await signup(p.t.app);
      const res = await saveCard(u.token, { provider: "stripe" });
      assert.equal(res.statusCode, 202, res.body);
      const si = res.json().setup_intent;
      assert.match(si.client_secret, /^seti_/);
      assert.equal(await getCard(u.token), null);
      const done = p.stripe.completeSetupIntent(si.id);
      const hook = await p.sendStripe(p.stripe.event("setup_intent.succeeded", done));
      assert.equal(hook.json().applied, true, hook.body);
      const card = await getCard(u.token);
      assert.equal(card.brand, "mastercard");
      assert.equal(card.last4, "4444");
      // payment_method.attached for the same card changes nothing
      await p.sendStripe(p.stripe.event("payment_method.attached", p.stripe.paymentMethods.get(done.payment_method)));
      assert.equal((await getCard(u.token)).id, card.id);
    });

    test("a deleted card is not brought back by a late payment_method.attached event", async () => {
      const u = await signup(p.t.app);
      const pm = p.stripe.createCard();
      await saveCard(u.token, { provider: "stripe", payment_method: pm });
      const attachedEvent = p.stripe.event("payment_method.attached", p.stripe.paymentMethods.get(pm));
      const del = await call(p.t.app, { method: "DELETE", url: "/v1/billing/cards", token: u.token });
      assert.equal(del.statusCode, 204);
      assert.equal(p.stripe.paymentMethods.get(pm).customer, null, "detached at Stripe");
      await p.sendStripe(attachedEvent);
      assert.equal(await getCard(u.token), null);
      expectError(
        await call(p.t.app, { method: "DELETE", url: "/v1/billing/cards", token: u.token }),
        404,
        "not_found",
      );
    });

    test("toss: the authKey of the registration window becomes a billing key; card company and masked digits are shown", async () => {
      const u = await signup(p.t.app);
      const authKey = p.toss.issueAuthKey({ number: "53275000****512*", company: "현대" });
      const res = await saveCard(u.token, { provider: "toss", auth_key: authKey });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().provider, "toss");
      assert.equal(res.json().brand, "현대");
      assert.equal(res.json().last4, "512*");
      expectError(await saveCard(u.token, { provider: "toss", auth_key: authKey }), 400, "invalid_auth_key"); // used once
      expectError(await saveCard(u.token, { provider: "toss" }), 400, "auth_key_required");
    });

    test("errors: wrong fields for the provider 400, unknown payment method 400, no token 401, read scope 403", async () => {
      const u = await signup(p.t.app);
      expectError(await saveCard(u.token, { provider: "stripe", auth_key: "x" }), 400, "invalid_request");
      expectError(await saveCard(u.token, { provider: "toss", payment_method: "pm_x" }), 400, "invalid_request");
      expectError(
        await saveCard(u.token, { provider: "stripe", payment_method: "pm_nosuch" }),
        400,
        "invalid_payment_method",
      );
      expectError(
        await saveCard(u.token, { provider: "stripe", card_number: "4242424242424242" }),
        400,
        "invalid_request",
      );
      expectError(await saveCard(u.token, {}), 400, "invalid_request");
      expectError(
        await call(p.t.app, { method: "POST", url: "/v1/billing/cards", body: { provider: "stripe" } }),
        401,
        "auth_required",
      );
      const { scopedKey } = await import("../helpers/app.js");
      const reader = await scopedKey(p.t.app, u.token, ["billing:read"]);
      expectError(await saveCard(reader, { provider: "stripe" }), 403, "scope_insufficient");
      expectError(
        await call(p.t.app, { method: "DELETE", url: "/v1/billing/cards", token: reader }),
        403,
        "scope_insufficient",
      );
      assert.equal((await call(p.t.app, { url: "/v1/billing/cards", token: reader })).statusCode, 200);
    });
  });

  describe("auto-recharge settings", () => {
    test("defaults off; enabling needs a card; amounts are checked in the card's currency; deleting the card turns it off", async () => {
      const u = await signup(p.t.app);
      const initial = await getAuto(u.token);
      assert.deepEqual(initial, {
        enabled: false,
        threshold: 0,
        amount: 0,
        currency: null,
        card: null,
        in_flight: false,
        consecutive_failures: 0,
        last_error: null,
        next_attempt_at: null,
      });
      expectError(await putAuto(u.token, { enabled: true, threshold: 1000, amount: 2000 }), 400, "card_required");
      await saveCard(u.token, { provider: "stripe", payment_method: p.stripe.createCard() });
      expectError(await putAuto(u.token, { enabled: true, threshold: 1000, amount: 100 }), 400, "amount_out_of_range");
      expectError(await putAuto(u.token, { enabled: true, threshold: -1, amount: 2000 }), 400, "invalid_request");
      expectError(await putAuto(u.token, { enabled: true, threshold: 1000 }), 400, "invalid_request");
      const res = await putAuto(u.token, { enabled: true, threshold: 1000, amount: 2000 });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().currency, "USD");
      assert.equal(res.json().card.last4, "4242");
      assert.deepEqual(await getAuto(u.token), res.json());
      await call(p.t.app, { method: "DELETE", url: "/v1/billing/cards", token: u.token });
      const off = await getAuto(u.token);
      assert.equal(off.enabled, false);
      assert.equal(off.card, null);
    });
  });

  describe("auto-recharge job", () => {
    test("below the threshold the card is charged once, however many passes run at once; at or above it, never", async () => {
      const u = await signup(p.t.app);
      const pm = p.stripe.createCard();
      await saveCard(u.token, { provider: "stripe", payment_method: pm });
      await putAuto(u.token, { enabled: true, threshold: 1000, amount: 2500 });
      const intentsBefore = p.stripe.paymentIntents.size;
      // passes overlapping at every phase: some start while the first charges, some after it credited
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          new Promise((r) => setTimeout(r, i * 7)).then(() => runAutoRecharge(p.deps)),
        ),
      );
      assert.equal(p.stripe.paymentIntents.size - intentsBefore, 1, "one charge at Stripe");
      assert.deepEqual(await autoTopups(u.id), [{ status: "succeeded", amount: 2500, failure_code: null }]);
      assert.equal(await p.balance(u.id, "USD"), 25_000_000);
      const pi = [...p.stripe.paymentIntents.values()].at(-1);
      assert.equal(pi.off_session, true);
      assert.equal(pi.payment_method, pm);
      const state = await getAuto(u.token);
      assert.equal(state.in_flight, false);
      assert.equal(state.consecutive_failures, 0);

      // now above the threshold: passes (as many as metering ticks) charge nothing
      for (let i = 0; i < 3; i++) await runAutoRecharge(p.deps);
      assert.equal((await autoTopups(u.id)).length, 1);
      // the success webhook that follows changes nothing
      await p.sendStripe(p.stripe.event("payment_intent.succeeded", pi));
      assert.equal(await p.balance(u.id, "USD"), 25_000_000);
    });

    test("a declined charge is recorded and retried with doubling back-off, then succeeds and resets", async () => {
      const u = await signup(p.t.app);
      const authKey = p.toss.issueAuthKey({ decline: true });
      const card = (await saveCard(u.token, { provider: "toss", auth_key: authKey })).json();
      const {
        rows: [{ provider_ref: sealed }],
      } = await p.t.db.query("SELECT provider_ref FROM billing_cards WHERE id = $1", [card.id]);
      // the billing key charges the card by itself: it is kept sealed at rest under the platform key
      assert.match(sealed, /^enc:v1:/);
      const billingKey = p.t.platform.secrets.open(sealed, "billing_cards.provider_ref");
      assert.ok(!sealed.includes(billingKey));
      await putAuto(u.token, { enabled: true, threshold: 10_000, amount: 20_000 });

      await runAutoRecharge(p.deps);
      let state = await getAuto(u.token);
      assert.equal(state.consecutive_failures, 1);
      assert.match(state.last_error, /REJECT_CARD_PAYMENT/);
      const firstWait = Date.parse(state.next_attempt_at) - Date.now();
      assert.ok(firstWait > 50_000 && firstWait <= 60_000, `first retry after ~60 s, got ${firstWait}`);
      assert.deepEqual(await autoTopups(u.id), [
        { status: "failed", amount: 20_000, failure_code: "REJECT_CARD_PAYMENT" },
      ]);

      // during back-off, passes do not charge
      await runAutoRecharge(p.deps);
      assert.equal((await autoTopups(u.id)).length, 1);

      await p.t.db.query(
        "UPDATE billing_auto_recharge SET next_attempt_at = now() - interval '1 second' WHERE account_id = $1",
        [u.id],
      );
      await runAutoRecharge(p.deps);
      state = await getAuto(u.token);
      assert.equal(state.consecutive_failures, 2);
      const secondWait = Date.parse(state.next_attempt_at) - Date.now();
      assert.ok(secondWait > 110_000 && secondWait <= 120_000, `second retry after ~120 s, got ${secondWait}`);

      p.toss.setDecline(billingKey, false);
      await p.t.db.query(
        "UPDATE billing_auto_recharge SET next_attempt_at = now() - interval '1 second' WHERE account_id = $1",
        [u.id],
      );
      await runAutoRecharge(p.deps);
      state = await getAuto(u.token);
      assert.equal(state.consecutive_failures, 0);
      assert.equal(state.last_error, null);
      assert.equal(await p.balance(u.id, "KRW"), 20_000);
      assert.deepEqual(
        (await autoTopups(u.id)).map((t) => t.status),
        ["failed", "failed", "succeeded"],
      );
    });

    test("a charge left in flight by a crash is settled on a later pass without charging twice", async () => {
      const u = await signup(p.t.app);
      await saveCard(u.token, { provider: "stripe", payment_method: p.stripe.createCard() });
      await putAuto(u.token, { enabled: true, threshold: 1000, amount: 1500 });
      // the charge's answer never arrives (Stripe fails the call and the SDK's two retries)
      const original = p.stripe.paymentIntents.size;
      p.stripe.failNext(3);
      await runAutoRecharge(p.deps);
      let state = await getAuto(u.token);
      assert.equal(state.in_flight, true, "outcome unknown: stays in flight");
      assert.equal(p.stripe.paymentIntents.size, original);
      await runAutoRecharge(p.deps);
      assert.equal((await autoTopups(u.id)).length, 1, "no second charge while one is in flight");
      await p.t.db.query(
        "UPDATE billing_auto_recharge SET last_attempt_at = now() - interval '10 minutes' WHERE account_id = $1",
        [u.id],
      );
      await runAutoRecharge(p.deps);
      state = await getAuto(u.token);
      assert.equal(state.in_flight, false);
      assert.equal(p.stripe.paymentIntents.size, original + 1);
      assert.equal(await p.balance(u.id, "USD"), 15_000_000);
      assert.deepEqual(
        (await autoTopups(u.id)).map((t) => t.status),
        ["succeeded"],
      );
    });

    test("disabled settings and accounts without a card are never charged", async () => {
      const u = await signup(p.t.app);
      await saveCard(u.token, { provider: "stripe", payment_method: p.stripe.createCard() });
      await putAuto(u.token, { enabled: false, threshold: 1000, amount: 1500 });
      await runAutoRecharge(p.deps);
      assert.equal((await autoTopups(u.id)).length, 0);
    });
  });
});
