import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";

/**
 * The console's log drains page in chromium: a drain created through the form is listed with its status and its
 * delivered, dropped and failed counts and last error (as the API answers them); a private destination shows the
 * API's refusal; a drain is deleted from its row.
 */
describe("console log drains", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  const email = `drains-${Date.now()}@example.com`;
  const password = "correct horse battery";

  before(async () => {
    // loopback destinations are allowed here (as the drains tests' receivers); private ones stay refused
    t = await listeningApp({ env: { OUTBOUND_ALLOW: "loopback" } });
    ({ browser, close: closeBrowser } = await launch());
    ({ page, errors } = await openPage(browser));
  });
  after(async () => {
    await closeBrowser?.();
    await t?.close();
  });

  test("create, list with counts, refuse a private destination, delete", async () => {
    await signUp(page, t.baseUrl, email, password);
    await page.getByRole("link", { name: "Apps" }).click();
    await page.getByRole("link", { name: "Log drains", exact: true }).click();
    await page.getByRole("heading", { name: "Log drains", level: 1 }).waitFor();
    await page.getByText("No log drains yet").waitFor();

    const form = page.locator("form").filter({ has: page.locator("[name=drain-destination]") });
    await form.locator("[name=drain-name]").fill("private-one");
    await form.locator("[name=drain-destination]").fill("https://10.1.2.3/ingest");
    await form.getByRole("button", { name: "Create log drain" }).click();
    await page.getByText(/private address/).waitFor();

    await form.locator("[name=drain-name]").fill("to-loopback");
    await form.locator("[name=drain-destination]").fill("https://127.0.0.1:9/ingest");
    await form.locator("[name=drain-source]").selectOption("edge");
    await form.getByRole("button", { name: "Create log drain" }).click();
    const rows = page.getByTestId("log-drains");
    const row = rows.locator("[data-name='to-loopback'][data-status='waiting']");
    await row.getByText("Edge access lines").waitFor();
    await row.getByText("Waiting").waitFor();
    // the counts are the API's: one drain, nothing shipped yet
    const token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json()
      .token;
    const [drain] = (await call(t.app, { url: "/v1/log-drains", token })).json().items;
    assert.deepEqual([drain.state.delivered_count, drain.state.dropped_count, drain.state.failed_attempts], [0, 0, 0]);
    assert.deepEqual(await row.locator("td.num").allTextContents(), ["0", "0", "0"]);
    await shot(page, "log-drains-list");

    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: /Delete/ }).click();
    await page.getByText("No log drains yet").waitFor();
    assert.equal((await call(t.app, { url: "/v1/log-drains", token })).json().items.length, 0);
    assert.deepEqual(
      errors.filter((e) => !/status of 400/.test(e)),
      [],
    );
  });
});
