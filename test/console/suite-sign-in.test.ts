import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { person, suiteApp, type SuiteTestApp } from "../suite/sign-in-lib.js";
import { haveChromium, launch, openPage, shot } from "./browser.js";

/**
 * Sign-in with the suite in chromium (issue 27): the console's button takes the suite's enterprise admin through the
 * real OpenID Connect provider and back; the landing exchanges the one-time code for the cookie session and opens
 * the setup wizard; a staff member signing in meanwhile sees the held notice in words; the admin picks the join
 * policy and finishes the setup.
 */
describe("console suite sign-in in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let s: SuiteTestApp;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;

  before(async () => {
    s = await suiteApp();
    ({ browser, close: closeBrowser } = await launch());
  });
  after(async () => {
    await closeBrowser?.();
    await s?.close();
  });

  test("the admin signs in with the suite and reaches the wizard; staff are held with a notice; finish", async () => {
    const admin = person(s, { enterprise_admin: true, company_name: "Acme Browser" });
    const { page, errors } = await openPage(browser);
    await page.goto(`${s.baseUrl}/signin`);
    s.idp.loginAs = admin.sub;
    await page.getByRole("link", { name: "Sign in with the suite" }).click();
    await page.waitForURL("**/org/suite");
    await page.getByRole("heading", { name: "Suite setup" }).waitFor();
    await page.getByText("linked to the suite company acme").waitFor();
    await shot(page, "suite-wizard");

    const staff = person(s);
    const held = await openPage(browser);
    await held.page.goto(`${s.baseUrl}/signin`);
    s.idp.loginAs = staff.sub;
    await held.page.getByRole("link", { name: "Sign in with the suite" }).click();
    await held.page.waitForURL("**/signin?notice=suite_setup_pending");
    await held.page.getByTestId("suite-notice").getByText("setup is not finished yet").waitFor();
    await shot(held.page, "suite-notice");
    const none = await s.db.query("SELECT 1 FROM accounts WHERE email = $1", [staff.email]);
    assert.equal(none.rowCount, 0, "a held staff member gets no account");

    await page.getByLabel("All staff of the company").check();
    await page.getByRole("button", { name: "Finish setup" }).click();
    await page.getByText("The setup is finished").waitFor();
    const { rows } = await s.db.query("SELECT join_policy, setup_done_at FROM suite_links WHERE company_id = 'acme'");
    assert.equal(rows[0].join_policy, "all");
    assert.ok(rows[0].setup_done_at);

    // now the staff member gets in, in the organization's context
    s.idp.loginAs = staff.sub;
    await held.page.getByRole("link", { name: "Sign in with the suite" }).click();
    await held.page.waitForURL("**/databases");
    await held.page.getByTestId("context-switch").waitFor();
    assert.equal(await held.page.getByTestId("context-switch").inputValue(), "org");
    assert.deepEqual(errors, []);
    assert.deepEqual(held.errors, []);
  });
});
