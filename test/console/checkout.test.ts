import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { call } from "../helpers/app.js";
import { startPaymentsApp, type PaymentsTestApp } from "../fakes/payments-app.js";
import { loadConfig } from "../../src/config/config.js";
import { checkoutSources } from "../../src/billing/payments/checkout.js";
import { consoleCsp } from "../../src/console/headers.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";
import { startFakeCheckoutScripts, type FakeCheckoutScripts } from "./fake-checkout.js";

/** The CSP sources of the real providers' default script URLs: their documented origins, nothing else. */
describe("console checkout: CSP sources of the configured providers", () => {
  const keys = {
    STRIPE_SECRET_KEY: "sk_test_0123456789abcdef",
    STRIPE_PUBLISHABLE_KEY: "pk_test_0123456789",
    TOSS_SECRET_KEY: "test_sk_0123456789abcdef",
    TOSS_CLIENT_KEY: "test_gck_0123456789",
  };
  test("nothing configured: no extra origin and no frame-src at all", () => {
    const csp = consoleCsp(checkoutSources(loadConfig({}).payments));
    assert.match(csp, /script-src 'self';/);
    assert.match(csp, /connect-src 'self';/);
    assert.doesNotMatch(csp, /frame-src/);
    // a secret key alone (server-side charges) is not a browser checkout
    const secretOnly = loadConfig({ STRIPE_SECRET_KEY: keys.STRIPE_SECRET_KEY }).payments;
    assert.deepEqual(checkoutSources(secretOnly), { script: [], frame: [], connect: [] });
  });
  test("Stripe and Toss at their own hosts bring their frames and APIs", () => {
    assert.deepEqual(checkoutSources(loadConfig(keys).payments), {
      script: ["https://js.stripe.com", "https://*.js.stripe.com", "https://js.tosspayments.com"],
      frame: [
        "https://js.stripe.com",
        "https://*.js.stripe.com",
        "https://hooks.stripe.com",
        "https://*.tosspayments.com",
      ],
      connect: ["https://api.stripe.com", "https://*.tosspayments.com"],
    });
    const stripeOnly = {
      STRIPE_SECRET_KEY: keys.STRIPE_SECRET_KEY,
      STRIPE_PUBLISHABLE_KEY: keys.STRIPE_PUBLISHABLE_KEY,
    };
    assert.doesNotMatch(consoleCsp(checkoutSources(loadConfig(stripeOnly).payments)), /toss/);
  });
});

/**
 * Card top-ups finished in the providers' own checkout UIs, in chromium: the console loads the provider's script
 * from its configured URL (here local stand-ins, test/console/fake-checkout.ts), mounts its widget, pays, comes
 * back from the provider's redirect and confirms the top-up with the API, whose server side talks to the local
 * fake Stripe and Toss APIs the billing tests use. The balance grows.
 */
describe("console checkout in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let p: PaymentsTestApp;
  let scripts: FakeCheckoutScripts;
  let base: string;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  const email = `checkout-${Date.now()}@example.com`;
  let accountId = "";

  before(async () => {
    scripts = await startFakeCheckoutScripts();
    p = await startPaymentsApp({
      STRIPE_PUBLISHABLE_KEY: scripts.publishableKey,
      STRIPE_JS_URL: scripts.stripeJsUrl,
      TOSS_CLIENT_KEY: scripts.clientKey,
      TOSS_JS_URL: scripts.tossJsUrl,
    });
    scripts.bind(p.stripe, p.toss);
    await p.t.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(p.t.app.server.address() as AddressInfo).port}`;
    ({ browser, close: closeBrowser } = await launch());
    ({ page, errors } = await openPage(browser, { timeout: 15_000 }));
  });
  after(async () => {
    await closeBrowser?.();
    await p?.close();
    await scripts?.close();
  });

  test("the page's CSP allows exactly the configured script origin; checkout-config names the keys", async () => {
    const res = await call(p.t.app, { url: "/billing" });
    const csp = String(res.headers["content-security-policy"]);
    const o = scripts.origin;
    assert.equal(
      csp,
      `default-src 'none'; script-src 'self' ${o}; style-src 'self'; img-src 'self' data:; font-src 'self'; ` +
        `connect-src 'self'; frame-src ${o}; manifest-src 'self'; base-uri 'none'; form-action 'self'; ` +
        "frame-ancestors 'none'; object-src 'none'",
    );
    const config = await call(p.t.app, { url: "/v1/billing/checkout-config" });
    assert.equal(config.statusCode, 200, "public: no token needed");
    assert.deepEqual(config.json().stripe, { publishable_key: scripts.publishableKey, js_url: scripts.stripeJsUrl });
    assert.deepEqual(config.json().toss, { client_key: scripts.clientKey, js_url: scripts.tossJsUrl });
    assert.deepEqual(config.json().topup_limits.krw, { min: 1000, max: 5_000_000 });
  });

  test("Stripe: the Payment Element takes the card, Stripe redirects back, the top-up is confirmed", async () => {
    await signUp(page, base, email, "correct horse battery");
    const { rows } = await p.t.db.query<{ id: string }>("SELECT id FROM accounts WHERE email = $1", [email]);
    accountId = rows[0].id;

    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByLabel("Provider").selectOption("stripe");
    await page.getByLabel("Amount (USD)").fill("2");
    await page.getByRole("button", { name: "Continue to checkout" }).click();
    await page
      .getByText(/From \$5\.00 to \$5,000\.00/)
      .first()
      .waitFor(); // validated before sending
    await page.getByLabel("Amount (USD)").fill("25");
    await page.getByRole("button", { name: "Continue to checkout" }).click();
    const card = page.frameLocator("[data-testid='stripe-element'] iframe").getByLabel("Card number");
    await card.waitFor();
    assert.equal(await card.inputValue(), "4242 4242 4242 4242");
    await shot(page, "30-topup-stripe-element");
    await page.getByRole("button", { name: "Pay $25.00" }).click();
    await page.getByText("The top-up of $25.00 succeeded").waitFor();
    assert.equal(new URL(page.url()).search, "", "the provider's query is taken off the address");
    assert.equal(await p.balance(accountId, "USD"), 25_000_000);
    await page.locator(".stat").filter({ hasText: "$25.00" }).first().waitFor();
    await shot(page, "31-topup-stripe-done");
    assert.deepEqual(
      scripts.requests.filter((r) => r.startsWith("/v3") || r.startsWith("/stripe/confirm")),
      ["/v3/", "/stripe/confirm"],
    );
  });

  test("Toss: the payment widget, its window, the success URL, and the confirmation with the paymentKey", async () => {
    await page.getByLabel("Provider").selectOption("toss");
    await page.locator("input[name='topup-amount']").fill("30000"); // auto-recharge has an "Amount (KRW)" too
    await page.getByRole("button", { name: "Continue to checkout" }).click();
    await page.frameLocator("#toss-payment-methods iframe").getByText("신용·체크카드").waitFor();
    await page
      .frameLocator("#toss-agreement iframe")
      .getByText(/결제 서비스 이용 약관/)
      .waitFor();
    await shot(page, "32-topup-toss-widget");
    await page.getByRole("button", { name: "Pay ₩30,000" }).click();
    await page.getByText("The top-up of ₩30,000 succeeded").waitFor();
    await page.getByTestId("balance").filter({ hasText: "₩30,000" }).waitFor();
    assert.equal(await p.balance(accountId, "KRW"), 30_000);
    const confirms = p.toss.requests.filter((r) => r.path.startsWith("/v1/payments/confirm"));
    assert.equal(confirms.length, 1, "the API confirmed the payment with Toss once");
    await shot(page, "33-topup-toss-done");
  });

  test("a payment the provider sends to the fail URL is shown in words with its code; nothing is credited", async () => {
    const created = await p.t.db.query<{ id: string }>(
      "SELECT id FROM billing_topups WHERE provider = 'toss' ORDER BY created_at DESC LIMIT 1",
    );
    const failUrl = new URL(`${base}/billing`);
    for (const [k, v] of Object.entries({
      topup: created.rows[0].id,
      provider: "toss",
      failed: "1",
      code: "PAY_PROCESS_CANCELED",
      message: "The customer canceled the payment.",
      orderId: "x",
    }))
      failUrl.searchParams.set(k, v);
    await page.goto(failUrl.toString());
    await page.getByRole("alert").filter({ hasText: "PAY_PROCESS_CANCELED" }).waitFor();
    await page.getByText("The customer canceled the payment.").waitFor();
    assert.equal(await p.balance(accountId, "KRW"), 30_000);
    await shot(page, "34-topup-failed");
    assert.deepEqual(errors, []);
  });
});
