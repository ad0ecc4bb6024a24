import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError } from "../helpers/app.js";
import { intervalStartOf } from "../../src/billing/metering/meter.js";
import { chargeCard } from "../../src/billing/invoicing/index.js";
import { finalizeDue } from "../../src/orgs/invoices/finalize.js";
import { attemptKeys, chargeDue, RETRY_HOURS, STALE_MS } from "../../src/orgs/invoices/charge.js";
import { orgInvoicesArea as orgsArea } from "../../src/orgs/invoices/module.js";
import { makeOrg, ORG, type Person } from "./lib.js";
import {
  backdate,
  companyAssets,
  gpuAsset,
  HOUR,
  invoicesOf,
  ledgerUsage,
  meter,
  months,
  orgWallet,
  registerCard,
  startBillingApp,
  tossCard,
  tossPaymentsFor,
  type BillingApp,
} from "./invoices-lib.js";

describe("organization card and invoices", () => {
  let b: BillingApp;
  before(async () => {
    b = await startBillingApp();
  });
  after(async () => {
    await b.close();
  });

  const req = (who: Person, method: "GET" | "POST" | "DELETE" | "PATCH", url: string, body?: unknown) =>
    call(b.t.app, { method, url, token: who.token, body });
  const admit = (orgId: string, accountId: string) =>
    b.t.platform.kernel.admit(b.t.db, {
      owner: { kind: "org", id: orgId },
      accountId,
      kind: "database",
      size: "basic",
    });
  const orgCard = async (who: Person) =>
    (await call(b.t.app, { url: "/v1/billing/cards", token: who.token, headers: ORG })).json().card;

  test("register: owner only; pay-as-you-go from now on a postpaid wallet; removed again without usage", async () => {
    const org = await makeOrg(b.t, { admins: 1, members: 1 });
    await assert.rejects(admit(org.id, org.members[0].id), { code: "insufficient_funds" });
    expectError(await req(org.admins[0], "POST", "/v1/org/billing/card", tossCard(b)), 403, "forbidden_role");
    expectError(await req(org.members[0], "POST", "/v1/org/billing/card", tossCard(b)), 403, "forbidden_role");
    expectError(await req(org.outsider, "POST", "/v1/org/billing/card", tossCard(b)), 404, "not_found");
    expectError(await req(org.owner, "POST", "/v1/org/billing/card", { provider: "toss" }), 400, "auth_key_required");
    expectError(await req(org.owner, "POST", "/v1/org/billing/card", { provider: "stripe" }), 400, "invalid_request");

    const reg = await registerCard(b, org.owner, tossCard(b, { number: "53651234****987*" }));
    assert.equal(reg.billing_mode, "card");
    assert.equal(reg.card.provider, "toss");
    assert.equal(reg.card.last4, "987*");
    assert.ok(Math.abs(Date.parse(reg.card_billing_since) - Date.now()) < 60_000);
    assert.equal((await orgWallet(b.t, org.id)).policy, "postpaid");
    await admit(org.id, org.members[0].id); // billed afterwards: paid creation passes at zero balance
    assert.equal((await orgCard(org.admins[0])).id, reg.card.id); // saved by billing for owner = the organization
    assert.equal((await req(org.owner, "GET", "/v1/billing/cards")).json().card, null);

    const list = await req(org.members[0], "GET", "/v1/org/invoices");
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(list.json().billing_mode, "card");
    assert.equal(list.json().card.id, reg.card.id);
    assert.deepEqual(list.json().items, []);
    expectError(await req(org.owner, "PATCH", "/v1/org", { billing_mode: "prepaid" }), 409, "conflict");
    expectError(await req(org.owner, "DELETE", "/v1/org", { confirm: org.name }), 409, "conflict");
    expectError(await req(org.admins[0], "DELETE", "/v1/org/billing/card"), 403, "forbidden_role");

    const removed = await req(org.owner, "DELETE", "/v1/org/billing/card");
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(removed.json().billing_mode, "personal");
    assert.ok(removed.json().final_invoices.every((i: { status: string }) => i.status === "paid"));
    assert.equal(await orgCard(org.admins[0]), null);
    assert.equal((await orgWallet(b.t, org.id)).policy, "prepaid");
    expectError(await req(org.owner, "DELETE", "/v1/org/billing/card"), 404, "not_found");

    const suite = await makeOrg(b.t, { admins: 0, members: 0 });
    await b.t.db.query("UPDATE orgs SET billing_mode = 'suite' WHERE id = $1", [suite.id]);
    expectError(await req(suite.owner, "POST", "/v1/org/billing/card", tossCard(b)), 409, "conflict");
  });

  test("finalize: the month's invoice is the ledger's sum, by member and kind, once across runs and two platforms", async () => {
    const now = new Date();
    const { prev, cur } = months(now);
    const org = await makeOrg(b.t, { admins: 1, members: 2 });
    await registerCard(b, org.owner, tossCard(b));
    const registered = new Date(prev.getTime() + 6 * HOUR);
    await backdate(b.t, org.id, registered);
    const assets = companyAssets(org);
    await meter(b.t, assets, new Date(prev.getTime() + HOUR)); // before the registration: not invoiced
    const month = await meter(b.t, assets, new Date(prev.getTime() + 24 * HOUR), 24);
    await meter(b.t, assets, intervalStartOf(now)); // this month: next invoice
    const wallet = await orgWallet(b.t, org.id);
    assert.equal(await ledgerUsage(b.t, wallet.id, registered, cur), month);
    assert.ok(month > 0);

    const second = await b.platform();
    const runs = await Promise.all([
      finalizeDue(b.deps, now),
      finalizeDue(second.deps, now),
      finalizeDue(b.deps, now),
      finalizeDue(second.deps, now),
    ]);
    assert.ok(runs.reduce((s, r) => s + r.created, 0) >= 1);
    await finalizeDue(second.deps, now);
    const rows = await invoicesOf(b.t, org.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].total_krw, month);
    assert.equal(rows[0].period_start.getTime(), registered.getTime());
    assert.equal(rows[0].period_end.getTime(), cur.getTime());

    const list = (await req(org.members[0], "GET", "/v1/org/invoices")).json();
    assert.equal(list.items.length, 1);
    const inv = list.items[0];
    assert.equal(inv.month, prev.toISOString().slice(0, 7));
    assert.equal(inv.kind, "monthly");
    assert.equal(inv.total_krw, month);
    assert.equal(inv.status, "pending");
    assert.equal(inv.card.provider, "toss");
    assert.equal(inv.payment.attempts, 0);
    // finalizing recorded one invoice.finalized event for the organization, once across the runs (issue 31)
    const events = await call(b.t.app, {
      url: "/v1/events?type=invoice.finalized",
      token: org.members[0].token,
      headers: ORG,
    });
    assert.deepEqual(
      events.json().items.map((e: any) => [e.resource.id, e.data.total_krw, e.owner.kind]),
      [[inv.id, month, "org"]],
    );

    const detail = (await req(org.admins[0], "GET", `/v1/org/invoices/${inv.id}`)).json();
    assert.deepEqual(
      detail.usage.by_member.map((m: { account_id: string }) => m.account_id).sort(),
      [org.owner.id, org.members[0].id, org.members[1].id].sort(),
    );
    const owner = detail.usage.by_member.find((m: { account_id: string }) => m.account_id === org.owner.id);
    assert.equal(owner.email, org.owner.email);
    assert.deepEqual(
      owner.kinds.map((k: { kind: string }) => k.kind),
      ["pod"],
    );
    assert.deepEqual(
      detail.usage.by_kind.map((k: { kind: string }) => k.kind),
      ["database", "pod"],
    );
    // the records' exact micro-won match the ledger's whole won to the sub-won carry at the edges
    assert.ok(Math.abs(detail.usage.microkrw - month * 1_000_000) < 1_000_000, JSON.stringify(detail.usage));

    const other = await makeOrg(b.t, { admins: 1, members: 0 });
    expectError(await req(other.admins[0], "GET", `/v1/org/invoices/${inv.id}`), 404, "not_found");
    expectError(await req(org.owner, "GET", "/v1/org/invoices/nope"), 404, "not_found");
    await second.t.close();
  });

  test("charge: once per invoice across a restart and two workers, and when an attempt's answer was lost", async () => {
    const now = new Date();
    const { prev } = months(now);
    const org = await makeOrg(b.t, { admins: 0, members: 1 });
    await registerCard(b, org.owner, tossCard(b));
    await backdate(b.t, org.id, prev);
    const month = await meter(b.t, companyAssets(org), new Date(prev.getTime() + 48 * HOUR), 30);
    const before = (await orgWallet(b.t, org.id)).balance;
    assert.equal(before, -month);

    const worker = await b.platform();
    await finalizeDue(worker.deps, now);
    await worker.t.close(); // the platform restarts between finalisation and charge
    const restarted = await b.platform();
    await Promise.all([chargeDue(b.deps, now), chargeDue(restarted.deps, now)]);
    await chargeDue(restarted.deps, now);
    const [inv] = await invoicesOf(b.t, org.id);
    assert.equal(inv.status, "paid");
    assert.equal(inv.attempts, 1);
    const payments = tossPaymentsFor(b, inv.id);
    assert.equal(payments.length, 1);
    assert.equal(payments[0].totalAmount, month);
    const detail = (await req(org.owner, "GET", `/v1/org/invoices/${inv.id}`)).json();
    assert.equal(detail.status, "paid");
    assert.ok(detail.payment.transaction_id);
    // the payment covers the usage already debited: the wallet is back where it was
    assert.equal((await orgWallet(b.t, org.id)).balance, 0);
    const { rows } = await b.t.db.query(
      "SELECT source_type, source_id FROM ledger_transactions WHERE idempotency_key = $1",
      [`org-invoice:${inv.id}:paid`],
    );
    assert.deepEqual(rows, [{ source_type: "invoice", source_id: inv.id }]);

    // attempt 1 reached Toss with the card it pinned, then its worker died before recording the answer; another card
    // is registered meanwhile: the stale claim is retried with the same keys on the same card, and Toss replays it
    const lost = await makeOrg(b.t, { admins: 0, members: 1 });
    const first = await registerCard(b, lost.owner, tossCard(b, { number: "11112222****333*" }));
    await backdate(b.t, lost.id, prev);
    const lostMonth = await meter(b.t, companyAssets(lost), new Date(prev.getTime() + 48 * HOUR), 30);
    await finalizeDue(restarted.deps, now);
    const [pending] = await invoicesOf(b.t, lost.id);
    const made = await chargeCard(
      b.deps.payments,
      { kind: "org", id: lost.id },
      {
        amountKrw: pending.total_krw,
        ...attemptKeys(pending.id, 1),
        orderName: "x",
        metadata: {},
        known: null,
        cardId: first.card.id,
      },
    );
    assert.equal(made.outcome.status, "paid");
    const claimedAt = new Date(now.getTime() - STALE_MS - 1000);
    await b.t.db.query(
      "UPDATE org_invoices SET attempts = 1, charging_since = $2, last_attempt_at = $2, attempt_card_id = $3 WHERE id = $1",
      [pending.id, claimedAt, first.card.id],
    );
    await registerCard(b, lost.owner, tossCard(b, { number: "44445555****666*" }));
    await chargeDue(b.deps, new Date(now.getTime() - 60_000)); // not stale yet: left alone
    assert.equal((await invoicesOf(b.t, lost.id))[0].status, "pending");
    await chargeDue(restarted.deps, now);
    const [settled] = await invoicesOf(b.t, lost.id);
    assert.equal(settled.status, "paid");
    assert.equal(settled.attempts, 1);
    assert.equal(tossPaymentsFor(b, pending.id).length, 1);
    assert.equal(tossPaymentsFor(b, pending.id)[0].totalAmount, lostMonth);
    assert.equal((await req(lost.owner, "GET", `/v1/org/invoices/${pending.id}`)).json().card.last4, "333*");
    await restarted.t.close();
  });

  test("declined: retried with back-off, failed after the last attempt; DELETE 409; a new card pays; DELETE closes the month", async () => {
    const now = new Date();
    const { prev } = months(now);
    const org = await makeOrg(b.t, { admins: 1, members: 1 });
    await registerCard(b, org.owner, tossCard(b, { decline: true }));
    await backdate(b.t, org.id, prev);
    const assets = companyAssets(org);
    const month = await meter(b.t, assets, new Date(prev.getTime() + 72 * HOUR), 30);
    await finalizeDue(b.deps, now);
    let at = now;
    await chargeDue(b.deps, at);
    let [inv] = await invoicesOf(b.t, org.id);
    assert.equal(inv.status, "pending");
    assert.equal(inv.attempts, 1);
    assert.equal(inv.failure_code, "REJECT_CARD_PAYMENT");
    assert.equal(inv.next_attempt_at.getTime(), at.getTime() + HOUR);
    await chargeDue(b.deps, new Date(at.getTime() + HOUR - 60_000)); // backing off
    assert.equal((await invoicesOf(b.t, org.id))[0].attempts, 1);
    for (const [i, hours] of RETRY_HOURS.entries()) {
      at = new Date(at.getTime() + hours * HOUR);
      await chargeDue(b.deps, at);
      [inv] = await invoicesOf(b.t, org.id);
      assert.equal(inv.attempts, i + 2);
      if (i + 1 < RETRY_HOURS.length)
        assert.equal(inv.next_attempt_at.getTime(), at.getTime() + RETRY_HOURS[i + 1] * HOUR);
    }
    assert.equal(inv.status, "failed");
    assert.equal(inv.next_attempt_at, null);
    await chargeDue(b.deps, new Date(at.getTime() + 1000 * HOUR));
    assert.equal((await invoicesOf(b.t, org.id))[0].attempts, 6);
    assert.equal(tossPaymentsFor(b, inv.id).length, 0);
    const shown = (await req(org.members[0], "GET", "/v1/org/invoices")).json().items[0];
    assert.equal(shown.status, "failed");
    assert.equal(shown.payment.declines, 6);
    assert.equal(shown.payment.failure.code, "REJECT_CARD_PAYMENT");
    expectError(await req(org.owner, "DELETE", "/v1/org/billing/card"), 409, "conflict");

    // another card: the unpaid invoice is charged to it at once
    await registerCard(b, org.owner, tossCard(b, { number: "94101234****555*" }));
    await chargeDue(b.deps, new Date());
    [inv] = await invoicesOf(b.t, org.id);
    assert.equal(inv.status, "paid");
    assert.equal(inv.attempts, 7);
    assert.equal((await req(org.owner, "GET", `/v1/org/invoices/${inv.id}`)).json().card.last4, "555*");

    // removing the card invoices the month so far before forgetting the card; under 100 KRW it is waived, not charged
    const sofar = await meter(b.t, assets, intervalStartOf(new Date()));
    assert.ok(sofar > 0 && sofar < 100, String(sofar));
    const removed = await req(org.owner, "DELETE", "/v1/org/billing/card");
    assert.equal(removed.statusCode, 200, removed.body);
    const [closing] = removed.json().final_invoices;
    assert.equal(closing.kind, "closing");
    assert.equal(closing.status, "paid");
    assert.equal(closing.total_krw, sofar);
    assert.equal(closing.payment.waived, true);
    assert.equal(closing.payment.attempts, 0);
    assert.equal(tossPaymentsFor(b, closing.id).length, 0);
    assert.equal(removed.json().billing_mode, "personal");
    assert.equal(await orgCard(org.admins[0]), null);
    const wallet = await orgWallet(b.t, org.id);
    assert.equal(wallet.policy, "prepaid");
    assert.equal(wallet.balance, 0, `${month} + ${sofar} debited and paid`);
    const items = (await req(org.admins[0], "GET", "/v1/org/invoices")).json().items;
    assert.deepEqual(
      items.map((i: { kind: string; status: string }) => [i.kind, i.status]),
      [
        ["closing", "paid"],
        ["monthly", "paid"],
      ],
    );
  });

  test("jobs: finalize at 00:10 UTC on the 1st; the charge job (every 10 minutes) catches up missed months and charges", async () => {
    const schedules = b.t.platform.schedules.filter((j) => j.name.startsWith("orgs.invoices-"));
    assert.deepEqual(
      schedules.sort((x, y) => x.name.localeCompare(y.name)),
      [
        { name: "orgs.invoices-charge", cron: "*/10 * * * *" },
        { name: "orgs.invoices-finalize", cron: "10 0 1 * *" },
      ],
    );
    const { prev } = months(new Date());
    const org = await makeOrg(b.t, { admins: 0, members: 1 });
    await registerCard(b, org.owner, tossCard(b));
    await backdate(b.t, org.id, new Date(prev.getTime() - 20 * 24 * HOUR)); // the month before had no usage
    const month = await meter(b.t, companyAssets(org), new Date(prev.getTime() + 5 * 24 * HOUR), 30);
    const job = orgsArea.jobs!(b.t.platform, null).find((j) => j.name === "orgs.invoices-charge")!;
    await job.handler({} as never, { id: "test", retryCount: 0 });
    const rows = await invoicesOf(b.t, org.id);
    assert.deepEqual(
      rows.map((r) => [r.total_krw, r.status]),
      [
        [0, "paid"],
        [month, "paid"],
      ],
    );
  });

  test("stripe: charged in KRW off-session; a declined closing charge keeps the card until it is paid", async () => {
    const now = new Date();
    const { prev } = months(now);
    const org = await makeOrg(b.t, { admins: 0, members: 1 });
    const reg = await registerCard(b, org.owner, { provider: "stripe", payment_method: b.stripe.createCard() });
    assert.equal(reg.card.provider, "stripe");
    await backdate(b.t, org.id, prev);
    const assets = companyAssets(org);
    const month = await meter(b.t, assets, new Date(prev.getTime() + 96 * HOUR), 30);
    await finalizeDue(b.deps, now);
    await chargeDue(b.deps, now);
    const [inv] = await invoicesOf(b.t, org.id);
    assert.equal(inv.status, "paid");
    const intents = [...b.stripe.paymentIntents.values()].filter((pi) => pi.metadata.org_invoice_id === inv.id);
    assert.equal(intents.length, 1);
    assert.equal(intents[0].currency, "krw");
    assert.equal(intents[0].amount, month);
    assert.equal(intents[0].off_session, true);

    // the closing invoice is declined: card billing ends, the card stays for the retries, DELETE answers 409
    await registerCard(b, org.owner, { provider: "stripe", payment_method: b.stripe.createCard({ decline: true }) });
    const sofar = await meter(b.t, gpuAsset(org), intervalStartOf(new Date()));
    expectError(await req(org.owner, "DELETE", "/v1/org/billing/card"), 409, "conflict");
    const closing = (await invoicesOf(b.t, org.id)).find((i) => i.kind === "closing");
    assert.equal(closing.total_krw, sofar);
    assert.equal(closing.status, "pending");
    assert.equal(closing.failure_code, "generic_decline");
    assert.equal((await orgCard(org.owner)).provider, "stripe");
    assert.equal((await req(org.owner, "GET", "/v1/org")).json().billing_mode, "personal");
    expectError(await req(org.owner, "DELETE", "/v1/org/billing/card"), 409, "conflict");

    // a good card (pay-as-you-go again) pays it; then the card goes
    await registerCard(b, org.owner, { provider: "stripe", payment_method: b.stripe.createCard() });
    await chargeDue(b.deps, new Date());
    assert.equal((await invoicesOf(b.t, org.id)).find((i) => i.kind === "closing").status, "paid");
    const removed = await req(org.owner, "DELETE", "/v1/org/billing/card");
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(await orgCard(org.owner), null);
    assert.equal((await orgWallet(b.t, org.id)).balance, 0);
  });
});
