import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { call, OPERATOR_TOKEN, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";

const PASSWORD = "correct horse battery";

/**
 * The console's partner page in chromium (issue 26): the link is shown only once the operator made the account a
 * partner (GET /v1/partner answers 200); the page shows the profile, saves visitor_login_url, creates a child
 * through its form (the list shows it, the count follows), shows this month's usage and the invoices, and deletes
 * the child after the confirmation.
 */
describe("console partner page in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  const tag = randomBytes(3).toString("hex");
  const email = `partner-${tag}@example.com`;
  const ref = `acme-user-${tag}`;
  let token = "";

  before(async () => {
    t = await listeningApp();
    ({ browser, close: closeBrowser } = await launch());
    ({ page, errors } = await openPage(browser, { acceptDialogs: true }));
  });
  after(async () => {
    await closeBrowser?.();
    await t?.close();
  });

  test("the partner link appears once the operator makes the account a partner; the profile is shown", async () => {
    await signUp(page, t.baseUrl, email, PASSWORD);
    await page.getByRole("link", { name: "Organization" }).waitFor();
    assert.equal(await page.getByRole("link", { name: "Partner" }).count(), 0, "no partner link for a plain account");

    token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password: PASSWORD } })).json()
      .token as string;
    const me = (await call(t.app, { url: "/v1/me", token })).json();
    const made = await call(t.app, {
      method: "PUT",
      url: `/v1/operator/partners/${me.id}`,
      token: OPERATOR_TOKEN,
      body: { billing_mode: "partner_postpaid", monthly_limit_krw: 50_000 },
    });
    assert.equal(made.statusCode, 200, made.body);

    await page.reload();
    await page.getByRole("link", { name: "Partner" }).click();
    await page.waitForURL("**/partner");
    const profile = page.getByTestId("partner-profile");
    await profile.getByText("Partner postpaid (monthly invoice)").waitFor();
    await profile.getByText("₩50,000").waitFor();
    assert.equal(await page.getByTestId("partner-child-count").textContent(), "0");
    await page.getByText("No children yet.").waitFor();
    await page.getByText("No invoices yet.").waitFor();
    await page.getByText("No usage this month yet.").waitFor();

    await page.getByLabel("Visitor login URL").fill("http://example.com/login");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Enter an absolute https URL").waitFor();
    await page.getByLabel("Visitor login URL").fill("https://portal.example.com/login");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor();
    await profile.getByText("https://portal.example.com/login").waitFor();
    const saved = await call(t.app, { url: "/v1/partner", token });
    assert.equal(saved.json().visitor_login_url, "https://portal.example.com/login");
  });

  test("a child created through the page appears in the list; deleting it asks first", async () => {
    await page.getByLabel("External reference").fill("someone@example.com");
    await page.getByRole("button", { name: "Create child" }).click();
    await page.getByText("No e-mail address (@) and no spaces.").first().waitFor();
    await page.getByLabel("External reference").fill(ref);
    await page.getByLabel("Department code").fill("sales");
    await page.getByLabel("Tenant reference").fill("acme");
    await page.getByLabel("Monthly cap (KRW)").fill("10000");
    await page.getByRole("button", { name: "Create child" }).click();
    // sales is not in the partner's chart: the API's answer, in words
    await page.getByText("unknown_department").waitFor();
    await page.getByLabel("Department code").fill("");
    await page.getByRole("button", { name: "Create child" }).click();
    await page.getByText(`Child ${ref} created.`).waitFor();
    const row = page.getByTestId("partner-children").locator(`tr[data-ref="${ref}"]`);
    await row.getByText("acme", { exact: true }).waitFor();
    await row.getByText("₩10,000").waitFor();
    await page.getByTestId("partner-child-count").filter({ hasText: /^1$/ }).waitFor();
    await shot(page, "110-partner");

    await row.getByRole("button", { name: `Delete ${ref}` }).click();
    await page.getByText("No children yet.").waitFor();
    await page.getByTestId("partner-child-count").filter({ hasText: /^0$/ }).waitFor();

    // in the account's language: Korean
    const ko = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "ko" } });
    assert.equal(ko.statusCode, 200, ko.body);
    await page.reload();
    await page.getByRole("heading", { name: "파트너", level: 1 }).waitFor();
    await page.getByText("아직 자식 사용자가 없습니다.").waitFor();
    await shot(page, "111-partner-ko");
    assert.deepEqual(
      errors.filter((e) => !/status of 400: POST \/v1\/partner\/users/.test(e)),
      [],
    );
  });
});
