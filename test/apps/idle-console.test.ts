/**
 * Scale-to-zero in the console (issue 30), in chromium on real podman: an idle-stopped pod shows as asleep in the
 * list and on its page, and its idle setting is edited there (a PATCH of idle_stop_seconds, no deployment).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { listeningApp } from "../clients/lib.js";
import { haveChromium, launch, openPage, shot, signUp, waitUntil } from "../console/browser.js";
import type { AppsState } from "../../src/apps/module.js";
import type { Edge } from "../../src/edge/module.js";

const skip = haveChromium ? false : "chromium is not installed";
let t: TestApp & { baseUrl: string };
let browser: Browser;
let closeBrowser: () => Promise<void>;
let page: Page;
let errors: string[];
let token = "";
const email = `idle-${Date.now()}@example.com`;
const password = "correct horse battery";

/** test/run.ts builds the console for test/console only: built here when the page's source is newer */
function consoleBuilt(): void {
  const built = "packages/console/dist/index.html";
  const source = "packages/console/src/pages/idle.tsx";
  if (existsSync(built) && statSync(built).mtimeMs > statSync(source).mtimeMs) return;
  assert.equal(spawnSync("npm", ["run", "-s", "console:build"], { stdio: "inherit" }).status, 0);
}

before(async () => {
  if (skip) return;
  consoleBuilt();
  t = await listeningApp({
    startJobs: true,
    env: {
      APPS_ALLOW_LOCAL_IMAGES: "1",
      APPS_SWEEP_MS: "500",
      APPS_DRAIN_MS: "300",
      EDGE_PORT: "0",
      REGISTRY_PORT: "0",
      APPS_IDLE_MIN_SECONDS: "1",
    },
  });
  ({ browser, close: closeBrowser } = await launch());
  ({ page, errors } = await openPage(browser));
});

after(async () => {
  await closeBrowser?.();
  if (token)
    for (const p of (await call(t.app, { url: "/v1/pods", token })).json())
      await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token });
  await t?.close();
});

test("an idle-stopped pod shows asleep; its idle time is edited on its page", { skip }, async () => {
  await signUp(page, t.baseUrl, email, password);
  token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json().token;
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const created = await call(t.app, {
    method: "POST",
    url: "/v1/pods",
    token,
    body: { name: "sleepy-console", image, port: 8080, idle_stop_seconds: 1 },
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  const pod = async () => (await call(t.app, { url: `/v1/pods/${id}`, token })).json();
  await waitUntil(async () => (await pod()).state === "running", 60_000);
  await new Promise((r) => setTimeout(r, 1300));
  await t.platform.state<Edge>("edge").stats.flush();
  await t.platform.state<AppsState>("apps").idle.sweep();
  await waitUntil(async () => (await pod()).state === "stopped", 30_000);

  await page.goto(`${t.baseUrl}/pods`);
  await page.locator('[data-state="idle_stopped"]', { hasText: "Asleep" }).waitFor();
  await page.goto(`${t.baseUrl}/pods/${id}`);
  await page.getByTestId("idle-asleep").waitFor();
  assert.match(await page.getByTestId("idle-asleep").innerText(), /next request to its address starts it again/);
  assert.equal(await page.locator("h1 [data-state]").getAttribute("data-state"), "idle_stopped");
  // start is offered (like a stopped pod), and stop (no wake on request any more)
  await page.getByRole("button", { name: "Start" }).waitFor();

  const minutes = page.getByLabel("Stop after this many minutes without requests");
  await minutes.fill("abc");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText("Enter a whole number of minutes").waitFor();
  await minutes.fill("15");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByTestId("idle-setting").filter({ hasText: "Stops after 15 min without requests." }).waitFor();
  const saved = await pod();
  assert.equal(saved.idle_stop_seconds, 900);
  assert.equal(saved.generation, created.json().generation, "no deployment for the setting");
  await minutes.fill("");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByTestId("idle-setting").filter({ hasText: "Never stops for idleness." }).waitFor();
  assert.equal((await pod()).idle_stop_seconds, null);
  await shot(page, "pod-idle-stopped");
  assert.deepEqual(errors, []);
});
