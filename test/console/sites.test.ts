import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { APPS_DOMAIN, get } from "../static/lib.js";
import { FakeCloudflare, TestDns } from "../domains/lib.js";
import type { Edge } from "../../src/edge/module.js";
import { haveChromium, launch, openPage, shot, signUp, waitUntil } from "./browser.js";

const CF_TOKEN = `cf-${randomBytes(18).toString("hex")}`;

/** A folder of the site's files on disk, for the page's folder input. */
async function siteFolder(root: string, name: string, files: Record<string, string | Buffer>): Promise<string> {
  const dir = path.join(root, name);
  for (const [file, body] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), body);
  }
  return dir;
}

/**
 * The console's static sites and custom domains in chromium: create a site (the form validates), upload a folder
 * of three files through the folder input (packed into a tar.gz in the page), make it live and read it through
 * the edge, a second deployment with upload progress, roll back, the traffic chart, a custom domain with its
 * instructions and copy buttons, verification failing in words, Cloudflare setup (fake Cloudflare and DNS) and
 * the domain served, the all-domains page, deletion, and Korean at a phone's width.
 */
describe(
  "console static sites and domains in chromium",
  { skip: haveChromium ? false : "chromium is not installed" },
  () => {
    const dns = new TestDns();
    const cf = new FakeCloudflare(CF_TOKEN, dns);
    let t: TestApp & { baseUrl: string };
    let edgePort: number;
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let page: Page;
    let errors: string[];
    let token = "";
    let tmp: string;
    const zone = `z${randomBytes(4).toString("hex")}.example.com`;
    const domain = `www.${zone}`;
    const email = `sites-${Date.now()}@example.com`;
    const password = "correct horse battery";

    const waitFor = (what: () => Promise<boolean>) => waitUntil(what, 20_000, 150);
    const served = async (label: string, body: RegExp) =>
      waitFor(async () => body.test((await get(edgePort, label, "/")).text));

    before(async () => {
      tmp = await mkdtemp(path.join(os.tmpdir(), "console-sites-"));
      await dns.start();
      await cf.start();
      cf.addZone(zone);
      dns.add(zone, "NS", "ada.ns.cloudflare.com");
      dns.add(zone, "NS", "bob.ns.cloudflare.com");
      t = await listeningApp({
        startJobs: true,
        env: {
          APPS_DOMAIN,
          EDGE_PORT: "0",
          EDGE_STATS_FLUSH_MS: "200",
          DNS_SERVERS: dns.address,
          DNS_TIMEOUT_MS: "400",
          CLOUDFLARE_API_BASE: cf.base,
        },
      });
      edgePort = t.platform.state<Edge>("edge").port!;
      ({ browser, close: closeBrowser } = await launch());
      // dialogs: the domain delete confirmations
      ({ page, errors } = await openPage(browser, { acceptDialogs: true, clipboardOrigin: t.baseUrl }));
    });
    after(async () => {
      await closeBrowser?.();
      await t?.close();
      await cf.close();
      await dns.close();
      await rm(tmp, { recursive: true, force: true });
    });

    test("sign up, open Sites, create a site: the form validates first", async () => {
      await signUp(page, t.baseUrl, email, password);
      token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json().token;
      await page.getByRole("link", { name: "Sites" }).click();
      await page.getByRole("heading", { name: "Static sites", level: 1 }).waitFor();
      await page.getByText("No sites yet").waitFor();
      await shot(page, "60-sites-empty");

      await page.getByRole("link", { name: "Create site" }).click();
      await page.getByRole("button", { name: "Create site" }).click();
      await page.getByText("This field is required.").waitFor();
      await page.getByLabel("Name", { exact: true }).fill("docs");
      await page.getByLabel("Address (optional)").fill("docs");
      await page.getByLabel("Single-page app").check();
      await page.getByLabel("404 page (optional)").fill("/404.html");
      await page.getByRole("button", { name: "Create site" }).click();
      await page.getByText(/A file path inside the site/).waitFor();
      await shot(page, "61-site-new-validation");
      await page.getByLabel("404 page (optional)").fill("404.html");
      await page.getByRole("button", { name: "Create site" }).click();
      await page.waitForURL("**/sites/docs");
      await page.getByRole("heading", { name: /docs/, level: 1 }).waitFor();
      await page.getByText("Nothing is live yet").waitFor();
    });

    test("a folder of three files is packed in the page, uploaded, made live and served by the edge", async () => {
      const v1 = await siteFolder(tmp, "site-v1", {
        "index.html": "<!doctype html><title>Docs</title><h1>hello v1</h1>",
        "404.html": "<h1>missing</h1>",
        "css/site.css": "h1{color:#3b5bdb}",
      });
      await page.getByLabel("Make it live when the upload finishes").uncheck();
      await page.getByTestId("folder-input").setInputFiles(v1);
      await page.getByTestId("picked").filter({ hasText: "3 files" }).waitFor();
      await page.getByText("css/site.css").waitFor();
      await shot(page, "62-site-upload-picked");
      await page.getByRole("button", { name: "Upload", exact: true }).click();
      await page.getByText("Uploaded 3 files").waitFor();
      const first = page.locator("[data-deployment]").first();
      await first.locator("[data-state='uploaded']").waitFor();
      assert.equal((await get(edgePort, "docs", "/")).status, 503, "nothing live before the finalize");
      await first.getByRole("button", { name: /^Make live / }).click();
      await first.locator("[data-state='live']").waitFor();
      await page.locator("h1 [data-state='live']").waitFor();
      await served("docs", /hello v1/);
      assert.match((await get(edgePort, "docs", "/css/site.css")).text, /color/);
      assert.equal((await get(edgePort, "docs", "/nowhere.txt")).text, "<h1>missing</h1>");
    });

    test("a second deployment shows its upload progress and goes live; rollback brings the first back", async () => {
      const v2 = await siteFolder(tmp, "site-v2", {
        "index.html": "<!doctype html><title>Docs</title><h1>hello v2</h1>",
        "404.html": "<h1>missing</h1>",
        "assets/noise.bin": randomBytes(400_000), // incompressible: the upload takes a while when throttled
      });
      await page.getByLabel("Make it live when the upload finishes").check();
      await page.getByTestId("folder-input").setInputFiles(v2);
      await page.getByTestId("picked").filter({ hasText: "3 files" }).waitFor();
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Network.enable");
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: 150 * 1024,
      });
      await page.getByRole("button", { name: "Upload", exact: true }).click();
      await page
        .getByTestId("upload-progress")
        .filter({ hasText: /Uploading: [1-9]\d?%/ })
        .waitFor();
      await shot(page, "63-site-upload-progress");
      await page.getByText("Deployed and live: 3 files").waitFor({ timeout: 30_000 });
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      await served("docs", /hello v2/);
      const rows = page.locator("[data-deployment]");
      await rows.first().locator("[data-state='live']").waitFor();
      await rows.nth(1).locator("[data-state='superseded']").waitFor();
      await rows
        .nth(1)
        .getByRole("button", { name: /^Roll back / })
        .click();
      await rows.nth(1).locator("[data-state='live']").waitFor();
      await rows.first().locator("[data-state='superseded']").waitFor();
      await served("docs", /hello v1/);
    });

    test("the traffic chart counts the edge's answers over 7, 30 and 90 days", async () => {
      for (let i = 0; i < 5; i++) await get(edgePort, "docs", "/");
      await get(edgePort, "docs", "/missing.html");
      await new Promise((r) => setTimeout(r, 600)); // the edge's statistics flush every 200 ms here
      await page.getByRole("button", { name: "30 days" }).click();
      const totals = page.getByTestId("stats-totals");
      await waitFor(async () => {
        const text = (await totals.textContent()) ?? "";
        return /Requests\s*([1-9]\d*)/.test(text) && !/4xx 0/.test(text);
      });
      await page.getByRole("button", { name: "7 days" }).click();
      await page.getByRole("button", { name: "Response time" }).click();
      assert.match(
        (await page.getByTestId("stats-chart").locator("svg").first().getAttribute("aria-label"))!,
        /\d ms$/,
      );
      await page.getByRole("button", { name: "Requests", exact: true }).click();
      await shot(page, "64-site-live");
    });

    test("a custom domain: instructions with copy buttons, verification in words, Cloudflare setup, served", async () => {
      const add = page.getByLabel("Domain", { exact: true });
      await add.fill("https://bad domain");
      await page.getByRole("button", { name: "Add domain" }).click();
      await page.getByText(/Enter a host name such as/).waitFor();
      await add.fill(domain);
      await page.getByRole("button", { name: "Add domain" }).click();
      const row = page.locator(`[data-domain='${domain}']`);
      await row.locator("[data-state='pending']").waitFor();
      const txt = row.locator("[data-record='TXT']");
      const cname = row.locator("[data-record='CNAME']");
      await txt.getByText(`_platform-verify.${domain}`).waitFor();
      await cname.getByText(`docs.${APPS_DOMAIN}`).waitFor();
      for (const label of ["Copy TXT Name", "Copy TXT Value", "Copy CNAME Name", "Copy CNAME Target"])
        await row.getByRole("button", { name: label }).waitFor();
      await row.getByRole("button", { name: "Copy CNAME Target" }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `docs.${APPS_DOMAIN}`);
      await row.getByTestId("dns-provider").filter({ hasText: "DNS provider: Cloudflare" }).waitFor();

      await row.getByRole("button", { name: "Verify" }).click();
      const result = row.getByTestId("verify-result");
      await result.filter({ hasText: "Not verified yet." }).waitFor();
      await result
        .getByText(/no record found/)
        .first()
        .waitFor();
      await shot(page, "65-domain-pending");

      await row.getByText("Set up the records with Cloudflare").click();
      const tokenInput = row.getByLabel("Cloudflare API token");
      await tokenInput.fill(CF_TOKEN);
      await row.getByRole("button", { name: "Create the records" }).click();
      assert.equal(await tokenInput.inputValue(), "", "the token leaves the form as it is sent");
      await row.getByText(`Cloudflare zone ${zone}:`).waitFor();
      await row.locator("[data-state='verified']").waitFor();
      await result.filter({ hasText: "Verified by the TXT record" }).waitFor();
      const html = await page.content();
      assert.ok(!html.includes(CF_TOKEN), "the token is nowhere in the page");
      await shot(page, "66-domain-verified");
      // the edge serves the site at the custom domain now
      await waitFor(async () =>
        /hello v1/.test((await get(edgePort, "docs", "/", { headers: { host: domain } })).text),
      );
    });

    test("the all-domains page: the domain and its app; after the site is deleted, the orphan is deleted", async () => {
      await page.getByRole("link", { name: "Domains", exact: true }).click();
      await page.getByRole("heading", { name: "Domains", level: 1 }).waitFor();
      const row = page.locator(`tr[data-domain='${domain}']`);
      await row.getByRole("link", { name: "docs" }).waitFor();
      await row.locator("[data-state='verified']").waitFor();
      await shot(page, "67-domains");

      await row.getByRole("link", { name: "docs" }).click();
      await page.waitForURL("**/sites/docs");
      const confirm = page.getByLabel(/Type docs to confirm/);
      await confirm.fill("doc");
      await page.getByRole("button", { name: "Delete site" }).click();
      await page.getByText("Type the name exactly as shown.").waitFor();
      await confirm.fill("docs");
      await page.getByRole("button", { name: "Delete site" }).click();
      await page.waitForURL("**/sites");
      await page.getByText("No sites yet").waitFor();
      await waitFor(async () => (await get(edgePort, "docs", "/")).status !== 200);

      await page.getByRole("link", { name: "Domains", exact: true }).click();
      await row.locator("[data-state='app-gone']").waitFor();
      await page.getByText(/to a deleted app/).waitFor();
      await shot(page, "68-domains-orphan");
      await row.getByRole("button", { name: `Delete ${domain}` }).click();
      await page.getByText("No custom domains yet.").waitFor();
      const left = await call(t.app, { url: "/v1/domains", token });
      assert.deepEqual(left.json(), []);
    });

    test("Korean at a phone's width, keyboard focus visible; no console errors", async () => {
      const site = await call(t.app, {
        method: "POST",
        url: "/v1/static",
        token,
        body: { name: "blog", slug: "blog" },
      });
      assert.equal(site.statusCode, 201, site.body);
      assert.equal(
        (await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "ko" } })).statusCode,
        200,
      );
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${t.baseUrl}/sites`);
      await page.getByRole("heading", { name: "정적 사이트", level: 1 }).waitFor();
      await shot(page, "69-sites-ko-phone");
      await page.getByRole("link", { name: "blog", exact: true }).click();
      await page.getByRole("heading", { name: /blog/, level: 1 }).waitFor();
      await page.getByRole("heading", { name: "커스텀 도메인" }).waitFor();
      await shot(page, "70-site-ko-phone");
      await page.getByRole("button", { name: "메뉴" }).click();
      await page.getByRole("link", { name: "도메인" }).waitFor();
      await shot(page, "71-menu-ko-phone");
      await page.getByRole("link", { name: "도메인" }).click();
      await page.getByRole("heading", { name: "도메인", level: 1 }).waitFor();
      await page.keyboard.press("Tab");
      await page.keyboard.press("Tab");
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      assert.notEqual(outline, "none", "the focused element shows its focus");
      assert.deepEqual(errors, []);
    });
  },
);
