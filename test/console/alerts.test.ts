import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import type { AlertsState } from "../../src/alerts/module.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";

/**
 * The console's alert rules page in chromium: rules made through the API are listed with their condition and state;
 * a rule the evaluator fired shows Firing, and Korean reads at a phone's width.
 */
describe("console alert rules", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  const email = `alerts-${Date.now()}@example.com`;
  const password = "correct horse battery";

  before(async () => {
    t = await listeningApp({});
    ({ browser, close: closeBrowser } = await launch());
    ({ page, errors } = await openPage(browser));
  });
  after(async () => {
    await closeBrowser?.();
    await t?.close();
  });

  test("rules are listed with their condition and state", async () => {
    await signUp(page, t.baseUrl, email, password);
    const token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json()
      .token;
    await page.getByRole("link", { name: "Apps" }).click();
    await page.getByRole("link", { name: "Alerts", exact: true }).click();
    await page.getByRole("heading", { name: "Alert rules", level: 1 }).waitFor();
    await page.getByText("No alert rules yet").waitFor();
    for (const body of [
      // no traffic: 0 requests, so `>= 0` holds and fires at once; `> 100` stays ok
      { name: "always", metric: "requests", comparison: ">=", threshold: 0, for_minutes: 0 },
      { name: "busy", metric: "requests", comparison: ">", threshold: 100, window_minutes: 10 },
    ]) {
      const res = await call(t.app, { method: "POST", url: "/v1/alert-rules", token, body });
      assert.equal(res.statusCode, 201, res.body);
    }
    await t.platform.state<AlertsState>("alerts").evaluator.run(Date.now());
    await page.reload();
    const rows = page.getByTestId("alert-rules");
    await rows.locator("[data-name='always'][data-state='firing']").getByText("Firing").waitFor();
    await rows.locator("[data-name='busy'][data-state='ok']").getByText("requests > 100").waitFor();
    await rows.locator("[data-name='busy']").getByText("for 5 min").waitFor();
    await shot(page, "alerts-list");
    await page.setViewportSize({ width: 390, height: 800 });
    const ko = await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "ko" } });
    assert.equal(ko.statusCode, 200, ko.body);
    await page.reload();
    await page.getByRole("heading", { name: "경보 규칙", level: 1 }).waitFor();
    await rows.locator("[data-name='always']").getByText("경보 중").waitFor();
    await shot(page, "alerts-list-ko");
    assert.deepEqual(errors, []);
  });
});
