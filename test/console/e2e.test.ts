import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { connect } from "../databases/lib.js";
import { haveChromium, launch, shot, watchErrors } from "./browser.js";
import { intervalStartOf, meterInterval } from "../../src/billing/metering/meter.js";
import { post, systemWallet, walletFor } from "../../src/billing/ledger/ledger.js";

/** A settled card top-up, posted straight to the ledger (the provider's checkout is not part of this test). */
async function credit(t: TestApp, email: string, amount: number) {
  const { rows } = await t.db.query<{ id: string }>("SELECT id FROM accounts WHERE email = $1", [email]);
  const wallet = await walletFor(t.db, { kind: "account", id: rows[0].id }, "KRW");
  const clearing = await systemWallet(t.db, "payments-clearing", "KRW");
  const key = `topup:e2e-${Date.now()}`;
  await post(t.db, {
    currency: "KRW",
    source: { type: "topup", id: key },
    idempotencyKey: key,
    legs: [
      { walletId: wallet.id, amount },
      { walletId: clearing.id, amount: -amount },
    ],
  });
}

/**
 * The console in a real browser (Debian chromium through playwright-core): sign up, issue a key and use it with
 * curl, create a database and watch it become running, connect with the revealed URL, read the usage chart,
 * switch to Korean, and the phone layout. Screenshots of each page go to .test-artifacts/console/.
 */
describe("console end to end in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const email = `e2e-${Date.now()}@example.com`;
  let databaseId = "";

  before(async () => {
    t = await listeningApp({ startJobs: true });
    ({ browser, close: closeBrowser } = await launch());
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: "en-US" });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    errors = watchErrors(page);
  });
  after(async () => {
    await closeBrowser?.();
    await t?.close();
  });

  test("a visitor is sent to sign in; forms validate before sending; sign-up signs in with an HttpOnly cookie", async () => {
    await page.goto(`${t.baseUrl}/`);
    await page.waitForURL("**/signin");
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await shot(page, "01-signin");
    await page.getByRole("link", { name: /Create one/ }).click();
    await page.getByRole("heading", { name: "Create account" }).waitFor();
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText("This field is required.").first().waitFor();
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText("At least 8 characters.").first().waitFor();
    await shot(page, "02-signup-validation");
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/databases");
    await page.getByText("No databases yet").waitFor();
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "platform_session")!;
    assert.ok(session.httpOnly && session.sameSite === "Strict", "HttpOnly, SameSite=Strict session cookie");
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    assert.doesNotMatch(stored, /op_u_/, "no token in web storage");
    assert.doesNotMatch(await page.evaluate(() => document.cookie), /platform_session/, "the page cannot read it");
    await shot(page, "03-databases-empty");
  });

  test("issue a key with scopes and expiry from lists; the secret is shown once and works with curl", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByLabel("Name").fill("ci deploy");
    await page.getByLabel("Expires").selectOption("30");
    await page.getByRole("button", { name: "Issue a key" }).click();
    const secret = page.locator("[data-secret='API key']");
    await secret.waitFor();
    const key = (await secret.textContent())!.trim();
    assert.match(key, /^opk_/);
    await page.getByRole("cell", { name: "ci deploy" }).waitFor();
    await shot(page, "04-keys");
    const curl = promisify(execFile);
    const list = await curl("curl", [
      "-s",
      "-w",
      "\\n%{http_code}",
      "-H",
      `authorization: Bearer ${key}`,
      `${t.baseUrl}/v1/databases`,
    ]);
    assert.match(list.stdout, /^\[\]\n200$/, list.stdout);
    const write = await curl("curl", [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-XPOST",
      "-H",
      `authorization: Bearer ${key}`,
      "-H",
      "content-type: application/json",
      "-d",
      '{"name":"nope-db"}',
      `${t.baseUrl}/v1/databases`,
    ]);
    assert.equal(write.stdout, "403", "a read-only key cannot create");
  });

  test("create a database, see it become running live, and connect with the revealed URL", async () => {
    await page.getByRole("link", { name: "Databases" }).click();
    await page.getByRole("link", { name: "Create database" }).click();
    await page.getByLabel("Name").fill("Bad_Name");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByText(/3-40 lowercase letters/).waitFor();
    await credit(t, email, 100_000); // a paid size needs a settled balance
    await page.getByLabel("Name").fill("shop-db");
    await page.getByLabel("Size").selectOption("basic");
    await page.getByLabel("Storage (GB)").fill("20");
    await shot(page, "05-database-new");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.waitForURL((u) => /^\/databases\/[^/]+$/.test(u.pathname) && u.pathname !== "/databases/new");
    databaseId = page.url().split("/").pop()!;
    const url = (await page.locator("[data-secret='Connection URL']").textContent())!.trim();
    await page.locator("[data-state='running']").first().waitFor({ timeout: 90_000 });
    await page.getByText("Updates live").waitFor({ state: "detached" });
    await shot(page, "06-database-running");
    const client = await connect(url);
    try {
      assert.equal((await client.query("SELECT 1 AS one")).rows[0].one, 1);
    } finally {
      await client.end();
    }
    await page
      .getByRole("link", { name: /Databases/ })
      .first()
      .click();
    await page.getByRole("link", { name: "shop-db" }).waitFor();
    await shot(page, "07-databases-list");
  });

  test("an API error is shown in words with its code", async () => {
    await page.goto(`${t.baseUrl}/databases/${databaseId}`);
    await page.getByRole("button", { name: "Reveal connection strings" }).click();
    await page.locator("[data-secret='Connection URL']").waitFor(); // the initial credentials, once
    await page.reload();
    await page.getByRole("button", { name: "Reveal connection strings" }).click();
    await page.getByRole("alert").filter({ hasText: "credentials_already_revealed" }).waitFor();
    await page.getByLabel("Allowlist", { exact: true }).fill("not-a-cidr");
    await page.getByRole("button", { name: "Save" }).first().click();
    await page.getByText(/Each line must be an address/).waitFor();
    await shot(page, "08-database-errors");
  });

  test("billing shows balance, burn rate and the daily usage chart", async () => {
    // the running database is metered (the hourly job, run here at once), so today's bar has its usage
    await meterInterval(t.db, t.platform.kernel.metering, intervalStartOf(new Date()));
    await page.getByRole("link", { name: "Billing" }).click();
    const chart = page.getByTestId("usage-chart");
    await chart.waitFor();
    assert.match((await chart.locator("figcaption").textContent())!, /Total/);
    assert.ok((await chart.locator("svg[role='img'] g").count()) >= 28, "a bar slot per day of the last 30");
    await page.getByTestId("balance").filter({ hasText: /₩/ }).waitFor();
    await shot(page, "09-billing");
  });

  test("switching to Korean translates the whole console", async () => {
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByLabel("Display name").fill("Kim Tester");
    await page.getByLabel("Language").selectOption("ko");
    await page.getByRole("button", { name: "Save" }).first().click();
    await page.getByRole("link", { name: "데이터베이스" }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), "ko");
    await shot(page, "10-account-ko");
    for (const [link, heading, name] of [
      ["데이터베이스", "데이터베이스", "11-databases-ko"],
      ["API 키", "API 키", "12-keys-ko"],
      ["결제", "결제", "13-billing-ko"],
    ]) {
      await page.getByRole("link", { name: link, exact: true }).click();
      await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
      await shot(page, name);
    }
  });

  test("phone width and keyboard: the menu folds, focus is visible, and there were no console errors", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.baseUrl}/databases/${databaseId}`);
    await page.locator("[data-state='running']").first().waitFor();
    await shot(page, "14-database-phone");
    const menu = page.getByRole("button", { name: "메뉴" });
    await menu.focus();
    await page.keyboard.press("Enter");
    await page.getByRole("link", { name: "결제" }).waitFor();
    await page.keyboard.press("Tab");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.notEqual(outline, "none", "the focused element shows its focus");
    await shot(page, "15-menu-phone");
    await page.getByRole("button", { name: "로그아웃" }).click();
    await page.waitForURL("**/signin");
    assert.deepEqual(errors, []);
  });
});
