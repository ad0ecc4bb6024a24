import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's chromium, or CHROMIUM_PATH; tests that need it are skipped, saying so, where it is missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);
/** Screenshots of each page, kept as artefacts of the run. */
export const SHOTS_DIR = path.resolve(".test-artifacts/console");

export async function launch(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox", // root in CI containers
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    browser,
    close: async () => {
      // playwright gave the browser a fresh profile directory of its own and deletes it on close
      await browser.close().catch(() => {});
    },
  };
}

/** Every console error, failed request and uncaught exception of the page, for the test to assert none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    // chromium logs every failed load without its address: those are taken from the responses below instead
    if (m.type() === "error" && !/^Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    // a 401 while asking who is signed in, and the 409 the test provokes on purpose (shown on the page in words),
    // are expected answers, not page errors
    // GET /v1/org is 404 for an account in no organization: how the console learns it has none
    const noOrg = r.status() === 404 && r.request().method() === "GET" && new URL(r.url()).pathname === "/v1/org";
    // GET /v1/partner is 403 for an account that is no partner: how the console learns not to show the partner page
    const noPartner =
      r.status() === 403 && r.request().method() === "GET" && new URL(r.url()).pathname === "/v1/partner";
    if (r.status() >= 400 && r.status() !== 401 && r.status() !== 409 && !noOrg && !noPartner)
      errors.push(`console: status of ${r.status()}: ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  page.on("requestfailed", (r) => {
    // podman creating and removing networks for other tests changes this machine's interfaces, and chromium
    // aborts what was in flight then: the machine's doing, not the page's
    const failure = r.failure()?.errorText ?? "";
    if (!/ERR_NETWORK_CHANGED|ERR_ABORTED/.test(failure))
      errors.push(`console: ${failure}: ${r.method()} ${new URL(r.url()).pathname}`);
  });
  page.on("pageerror", (e) => errors.push(`exception: ${e.message}`));
  return errors;
}

export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS_DIR, { recursive: true });
  const file = path.join(SHOTS_DIR, `${name}.png`);
  // from the top, so the sticky top bar sits where a reader sees it rather than where the last click scrolled to
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A page in a new desktop-sized English context, with its errors watched; dialogs (delete confirmations) accepted. */
export async function openPage(
  browser: Browser,
  opts: { timeout?: number; acceptDialogs?: boolean; clipboardOrigin?: string } = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
  if (opts.clipboardOrigin)
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: opts.clipboardOrigin });
  const page = await context.newPage();
  page.setDefaultTimeout(opts.timeout ?? 20_000);
  if (opts.acceptDialogs) page.on("dialog", (d) => void d.accept());
  return { page, errors: watchErrors(page) };
}

/** Signs up on the console's page and waits for the landing page (databases). */
export async function signUp(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/signup`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL("**/databases");
}

/** Polls until `what` holds, failing the test after `ms`. */
export async function waitUntil(what: () => Promise<boolean>, ms: number, every = 250): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) assert.fail("timed out");
    await new Promise((r) => setTimeout(r, every));
  }
}
