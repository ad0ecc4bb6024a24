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
    // chromium logs every 4xx answer; a 401 while asking who is signed in, and the 409 the test provokes on purpose
    // (shown on the page in words), are expected answers, not page errors
    if (m.type() === "error" && !/Failed to load resource: .*status of (401|409)/.test(m.text()))
      errors.push(`console: ${m.text()}`);
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
