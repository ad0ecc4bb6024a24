import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, signup } from "../helpers/app.js";
import { startPaymentsApp, type PaymentsTestApp } from "../fakes/payments-app.js";

/** Everything a payment can change, to compare before and after a replay. */
async function snapshot(p: PaymentsTestApp) {
  const q = async (sql: string) => (await p.t.db.query(sql)).rows;
  return {
    transactions: await q("SELECT idempotency_key, source_type, currency FROM ledger_transactions ORDER BY seq"),
    entries: await q("SELECT count(*)::int AS n, coalesce(sum(abs(amount)), 0)::bigint AS volume FROM ledger_entries"),
    wallets: await q(
      "SELECT owner_kind, owner_id, currency, balance, overdue_since FROM ledger_wallets ORDER BY owner_kind, owner_id, currency",
    ),
    topups: await q(
      "SELECT id, status, provider_ref, provider_status, refunded_amount, failure_code, credit_transaction_id, credited_at, updated_at FROM billing_topups ORDER BY id",
    ),
    cards: await q("SELECT id, provider_ref, deleted_at FROM billing_cards ORDER BY id"),
  };
}

describe("payments under concurrency and replay", () => {
  let p: PaymentsTestApp;
  before(async () => {
    p = await startPaymentsApp();
  });
  after(async () => {
    await p.close();
  });

  test("200 parallel confirms and webhooks for one Stripe top-up credit it exactly once", async () => {
    const u = await signup(p.t.app);
    const topup = (
      await call(p.t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: u.token,
        body: { amount: 4200, currency: "USD", provider: "stripe" },
      })
    ).json();
    const pi = p.stripe.completeClientSide(topup.provider_ref);
    const requests = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0
        ? call(p.t.app, { method: "POST", url: `/v1/billing/topups/${topup.id}/confirm`, token: u.token, body: {} })
        : // distinct event ids (Stripe may send several events about one payment) and redeliveries of one
          p.sendStripe(p.stripe.event("payment_intent.succeeded", pi), { record: false }),
    );
    const results = await Promise.all(requests);
    for (const r of results) assert.equal(r.statusCode, 200, r.body);
    const postings = await p.postings(`topup:${topup.id}`);
    assert.equal(postings.length, 1, "one ledger transaction");
    assert.equal(postings[0].amount, 42_000_000);
    assert.equal(await p.balance(u.id, "USD"), 42_000_000);
    const confirms = results.filter((_, i) => i % 2 === 0).map((r) => r.json().status);
    assert.ok(
      confirms.every((s) => s === "succeeded"),
      "every confirm answers succeeded",
    );
    const { rows } = await p.t.db.query("SELECT count(*)::int AS n FROM ledger_transactions WHERE source_id = $1", [
      topup.id,
    ]);
    assert.equal(rows[0].n, 1);
  });

  test("200 parallel confirms and webhooks for one Toss top-up credit it exactly once", async () => {
    const u = await signup(p.t.app);
    const topup = (
      await call(p.t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: u.token,
        body: { amount: 77_000, currency: "KRW", provider: "toss" },
      })
    ).json();
    const paymentKey = p.toss.authorize(topup.order_id, 77_000);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        i % 2 === 0
          ? call(p.t.app, {
              method: "POST",
              url: `/v1/billing/topups/${topup.id}/confirm`,
              token: u.token,
              body: { payment_key: paymentKey },
            })
          : p.sendToss(paymentKey, { record: false }),
      ),
    );
    for (const r of results) assert.equal(r.statusCode, 200, r.body);
    assert.equal(
      p.toss.requests.filter((r) => r.path === "/v1/payments/confirm" && JSON.parse(r.raw).paymentKey === paymentKey)
        .length > 0,
      true,
    );
    assert.equal(p.toss.payments.get(paymentKey).status, "DONE");
    assert.equal((await p.postings(`topup:${topup.id}`)).length, 1);
    assert.equal(await p.balance(u.id, "KRW"), 77_000);
  });

  test("re-sending every webhook delivered so far changes nothing", async () => {
    // a history with every kind of event: success, partial and full refunds, saved cards, Toss cancellations
    const u = await signup(p.t.app);
    const s1 = (
      await call(p.t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: u.token,
        body: { amount: 3000, currency: "USD", provider: "stripe" },
      })
    ).json();
    const pi1 = p.stripe.completeClientSide(s1.provider_ref);
    await p.sendStripe(p.stripe.event("payment_intent.succeeded", pi1));
    await p.sendStripe(p.stripe.event("charge.refunded", p.stripe.refund(pi1.id, 1000)));
    const s2 = (
      await call(p.t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: u.token,
        body: { amount: 900, currency: "USD", provider: "stripe" },
      })
    ).json();
    const pi2 = p.stripe.completeClientSide(s2.provider_ref);
    await p.sendStripe(p.stripe.event("payment_intent.succeeded", pi2));
    await p.sendStripe(p.stripe.event("charge.refunded", p.stripe.refund(pi2.id)));
    const setup = (
      await call(p.t.app, { method: "POST", url: "/v1/billing/cards", token: u.token, body: { provider: "stripe" } })
    ).json().setup_intent;
    const si = p.stripe.completeSetupIntent(setup.id);
    await p.sendStripe(p.stripe.event("setup_intent.succeeded", si));
    await p.sendStripe(p.stripe.event("payment_method.attached", p.stripe.paymentMethods.get(si.payment_method)));
    // the card is removed afterwards: a replay must not bring it back
    assert.equal((await call(p.t.app, { method: "DELETE", url: "/v1/billing/cards", token: u.token })).statusCode, 204);

    const t1 = (
      await call(p.t.app, {
        method: "POST",
        url: "/v1/billing/topups",
        token: u.token,
        body: { amount: 40_000, currency: "KRW", provider: "toss" },
      })
    ).json();
    const key = p.toss.authorize(t1.order_id, 40_000);
    await call(p.t.app, {
      method: "POST",
      url: `/v1/billing/topups/${t1.id}/confirm`,
      token: u.token,
      body: { payment_key: key },
    });
    p.toss.cancel(key, 15_000);
    await p.sendToss(key);
    p.toss.cancel(key);
    await p.sendToss(key);

    assert.equal(await p.balance(u.id, "USD"), 20_000_000);
    assert.equal(await p.balance(u.id, "KRW"), 0);
    assert.ok(p.delivered.length >= 8, `webhooks delivered: ${p.delivered.length}`);

    const before = await snapshot(p);
    // every webhook of this file, in order and then in reverse, concurrently
    const replay = async (d: PaymentsTestApp["delivered"][number]) =>
      d.kind === "stripe"
        ? call(p.t.app, {
            method: "POST",
            url: "/v1/billing/stripe/webhook",
            headers: { "content-type": "application/json", "stripe-signature": p.stripe.sign(d.payload) },
            body: d.payload,
          })
        : call(p.t.app, {
            method: "POST",
            url: `/v1/billing/toss/webhook?key=${encodeURIComponent(d.signature!)}`,
            headers: { "content-type": "application/json" },
            body: d.payload,
          });
    for (const d of p.delivered) assert.equal((await replay(d)).statusCode, 200);
    await Promise.all([...p.delivered].reverse().map(replay));
    const afterReplay = await snapshot(p);
    assert.deepEqual(afterReplay, before);
  });
});
