import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import type { TestApp } from "../helpers/app.js";
import { call, OPERATOR_TOKEN } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { listeningApp } from "../clients/lib.js";
import { Podman, run } from "../registry/lib.js";
import { haveChromium, launch, openPage, shot, signUp, waitUntil } from "./browser.js";

const APPS_ENV = {
  APPS_ALLOW_LOCAL_IMAGES: "1", // the shared test images live in the host's local store
  APPS_SWEEP_MS: "500",
  APPS_DRAIN_MS: "300",
  APPS_MAX_CRASHES: "3",
  EDGE_PORT: "0",
  REGISTRY_PORT: "0",
};

/**
 * The console's apps pages in chromium on real podman containers: create a pod from the shared busybox httpd
 * image and see it run, follow its logs live, run a command in it, stop and start it, roll it to a new image,
 * deploy an image pushed to the caller's registry namespace, a pod group with its members, volumes and templates,
 * delete with the name typed, then Korean at a phone's width. Screenshots go to .test-artifacts/console/.
 */
describe("console apps pages in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  let v1: string;
  let v2: string;
  let token = "";
  let podman: Podman | null = null;
  const pushed: string[] = [];
  const email = `apps-${Date.now()}@example.com`;
  const password = "correct horse battery";

  const api = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown) =>
    call(t.app, { method, url, token, body });
  const waitFor = (what: () => Promise<boolean>) => waitUntil(what, 60_000);

  before(async () => {
    [v1, v2] = [await testImage("TEST_IMAGE_HTTPD_V1"), await testImage("TEST_IMAGE_HTTPD_V2")];
    t = await listeningApp({ startJobs: true, env: APPS_ENV });
    ({ browser, close: closeBrowser } = await launch());
    // dialogs: the volume and template delete confirmations
    ({ page, errors } = await openPage(browser, { acceptDialogs: true }));
  });
  after(async () => {
    await closeBrowser?.();
    if (token) {
      for (const g of (await api("GET", "/v1/pod-groups")).json()) await api("DELETE", `/v1/pod-groups/${g.id}`);
      for (const p of (await api("GET", "/v1/pods")).json()) await api("DELETE", `/v1/pods/${p.id}`);
      await new Promise((r) => setTimeout(r, 1500));
    }
    await t?.close();
    for (const name of pushed) await run("podman", ["untag", v1, name]);
    await podman?.cleanup();
  });

  test("sign up, open Apps, and create a pod: the form validates, then the pod becomes running live", async () => {
    await signUp(page, t.baseUrl, email, password);
    token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json().token;
    await page.getByRole("link", { name: "Apps" }).click();
    await page.getByRole("heading", { name: "Pods", level: 1 }).waitFor();
    await page.getByText("No pods yet").waitFor();
    await shot(page, "40-pods-empty");

    await page.getByRole("link", { name: "Create pod" }).click();
    await page.getByRole("button", { name: "Create pod" }).click();
    await page.getByText("This field is required.").first().waitFor();
    await page.getByLabel("Name", { exact: true }).fill("web");
    await page.getByLabel("Image", { exact: true }).fill(v1);
    await page.getByLabel("Port").fill("99999");
    await page.getByLabel("Command (optional)").fill(`sh -c "echo hello from the console; exec httpd -f -v -p 8080`);
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.getByLabel("Name 1").fill("1BAD");
    await page.getByRole("button", { name: "Create pod" }).click();
    await page.getByText("Enter a port from 1 to 65535").waitFor();
    await page.getByText("Close the quote.").waitFor();
    await page.getByText(/Names are letters, digits and _/).waitFor();
    await shot(page, "41-pod-new-validation");
    await page.getByLabel("Port").fill("8080");
    await page
      .getByLabel("Command (optional)")
      .fill(`sh -c "echo hello from the console; exec httpd -f -v -p 8080 -h /www"`);
    await page.getByLabel("Name 1").fill("GREETING");
    await page.getByLabel("Value 1").fill("hi");
    await shot(page, "42-pod-new");
    await page.getByRole("button", { name: "Create pod" }).click();
    await page.waitForURL((u) => /^\/pods\/[^/]+$/.test(u.pathname) && u.pathname !== "/pods/new");
    await page.locator("h1 [data-state='running']").waitFor({ timeout: 90_000 });
    await page.getByText("Updates live").waitFor({ state: "detached" });
    await page.getByText("GREETING").waitFor();
  });

  test("logs stream in without repeating lines; a command runs in the pod", async () => {
    const logs = page.getByTestId("pod-logs");
    await logs.filter({ hasText: "hello from the console" }).waitFor();
    const address = (await page.locator("dd code").first().textContent())!.trim();
    assert.match(address, /^127\.0\.0\.1:\d+$/);
    assert.equal(await (await fetch(`http://${address}/`)).text(), "v1\n");
    await logs.filter({ hasText: "response:200" }).waitFor(); // httpd -v logged the answer: appended by a later poll
    await new Promise((r) => setTimeout(r, 2500)); // one more poll: nothing may be appended twice
    const text = (await logs.textContent())!;
    assert.equal(text.split("hello from the console").length - 1, 1, text);

    await page.getByLabel("Command", { exact: true }).fill("cat /www/index.html");
    await page.getByRole("button", { name: "Run" }).click();
    const result = page.getByTestId("exec-result");
    await result.filter({ hasText: "Exit code 0" }).waitFor();
    assert.match((await result.textContent())!, /v1/);
    await shot(page, "43-pod-running");
  });

  test("stop and start follow the state live; a new image rolls out with progress", async () => {
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator("h1 [data-state='stopped']").waitFor({ timeout: 60_000 });
    await page.getByText("Logs follow while the pod runs.").waitFor();
    await shot(page, "44-pod-stopped");
    await page.getByRole("button", { name: "Start" }).click();
    await page.locator("h1 [data-state='running']").waitFor({ timeout: 60_000 });
    await page.getByText("Updates live").waitFor({ state: "detached", timeout: 60_000 });

    await page.getByLabel("Image", { exact: true }).fill(v2);
    await page.getByRole("button", { name: "Deploy" }).click();
    await page.getByText(/Rolling update to generation|Applying/).waitFor();
    await shot(page, "45-pod-rolling");
    await page.getByText("Updates live").waitFor({ state: "detached", timeout: 90_000 });
    await page.locator("dd code", { hasText: v2 }).waitFor();
    const address = (await page.locator("dd code").first().textContent())!.trim();
    assert.equal(await (await fetch(`http://${address}/`)).text(), "v2\n");
  });

  test("an image pushed to the caller's registry namespace is offered in the create form and deploys", async () => {
    const res = await api("POST", "/v1/registry/credentials");
    if (res.statusCode !== 201) return void console.log(`# registry not available here: ${res.body}`);
    const creds = res.json();
    const image = `${creds.registry}/${creds.namespace}/shop`;
    podman = await Podman.create();
    assert.equal((await run("podman", ["tag", v1, `${image}:1`])).code, 0);
    pushed.push(`${image}:1`);
    assert.equal((await podman.login(creds.registry, creds.username, creds.password)).code, 0);
    const push = await podman.push(`${image}:1`);
    assert.equal(push.code, 0, push.stderr);

    await page.getByRole("link", { name: "Pods", exact: true }).click();
    await page.getByRole("link", { name: "Create pod" }).click();
    await page.getByLabel("From your registry").selectOption(`${image}:1`);
    assert.equal(await page.getByLabel("Image", { exact: true }).inputValue(), `${image}:1`);
    await page.getByLabel("Name", { exact: true }).fill("shop");
    await shot(page, "46-pod-new-registry");
    await page.getByRole("button", { name: "Create pod" }).click();
    await page.waitForURL((u) => /^\/pods\/[^/]+$/.test(u.pathname) && u.pathname !== "/pods/new");
    await page.locator("h1 [data-state='running']").waitFor({ timeout: 90_000 });
  });

  test("a pod group: created with its bounds, its members listed with their states, deleted by name", async () => {
    await page.getByRole("link", { name: "Pod groups", exact: true }).click();
    await page.getByText("No pod groups yet").waitFor();
    await page.getByRole("link", { name: "Create group" }).click();
    await page.getByLabel("Name", { exact: true }).fill("web-group");
    await page.getByLabel("Minimum pods").fill("3");
    await page.getByLabel("Maximum pods").fill("2");
    await page.getByRole("button", { name: "Create group" }).click();
    await page.getByText("The minimum must not exceed the maximum.").waitFor();
    await page.getByLabel("Minimum pods").fill("1");
    await page.getByLabel("Image", { exact: true }).fill(v1);
    await page.getByRole("button", { name: "Create group" }).click();
    await page.waitForURL((u) => /^\/pod-groups\/[^/]+$/.test(u.pathname) && u.pathname !== "/pod-groups/new");
    await page.locator("h1 [data-state='running']").waitFor({ timeout: 90_000 });
    await page.locator(".rows [data-state='running']").first().waitFor();
    await page.getByText("Autoscaling may add pods up to the maximum.").waitFor();
    await shot(page, "47-group");
    await page.getByRole("link", { name: "Pod groups", exact: true }).click();
    await page.getByRole("link", { name: "web-group" }).waitFor();
    await shot(page, "48-groups");
    await page.getByRole("link", { name: "web-group" }).click();
    await page.getByLabel(/Type web-group to confirm/).fill("web-group");
    await page.getByRole("button", { name: "Delete group" }).click();
    await page.waitForURL("**/pod-groups");
    await waitFor(async () => (await api("GET", "/v1/pod-groups")).json().length === 0);
  });

  test("volumes and templates: create, list, deploy from a template, delete", async () => {
    await page.getByRole("link", { name: "Volumes" }).click();
    await page.getByLabel("Name", { exact: true }).fill("data");
    await page.getByLabel("Size (GB)").fill("0");
    await page.getByRole("button", { name: "Create volume" }).click();
    await page.getByText("Enter a whole number from 1 to 1024.").waitFor();
    await page.getByLabel("Size (GB)").fill("1");
    await page.getByRole("button", { name: "Create volume" }).click();
    // a volume is paid: without a balance the API's refusal is shown in words with its code
    await page.getByRole("alert").filter({ hasText: "insufficient_funds" }).waitFor();
    await shot(page, "49-volume-error");
    const me = (await api("GET", "/v1/me")).json();
    const credit = await call(t.app, {
      method: "POST",
      url: `/v1/operator/accounts/${me.id}/credit`,
      token: OPERATOR_TOKEN,
      body: { amount: 100_000, currency: "KRW", reason: "console apps test" },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    await page.getByRole("button", { name: "Create volume" }).click();
    await page.getByRole("cell", { name: "data", exact: true }).waitFor();
    await page.locator("tbody [data-state='ready'], tbody [data-state='failed']").first().waitFor({ timeout: 60_000 });
    await shot(page, "50-volumes");
    await page.getByRole("button", { name: "Delete data" }).click();
    await page.getByText("No volumes yet.").waitFor();

    await page.getByRole("link", { name: "Templates" }).click();
    await page.getByLabel("Name", { exact: true }).fill("web-tpl");
    await page.getByLabel("Image", { exact: true }).fill(v1);
    await page.getByRole("button", { name: "Save template" }).click();
    await page.getByText("web-tpl").waitFor();
    await shot(page, "51-templates");
    await page.getByRole("link", { name: "Deploy" }).click();
    await page.waitForURL("**/pods/new?template=*");
    assert.notEqual(await page.getByLabel("Template").inputValue(), "");
    await page.getByRole("link", { name: "Templates" }).click();
    await page.getByRole("button", { name: "Delete web-tpl" }).click();
    await page.getByText("No templates yet.").waitFor();
  });

  test("delete a pod with its name typed; Korean at a phone's width; no console errors", async () => {
    await page.getByRole("link", { name: "Pods", exact: true }).click();
    await page.getByRole("link", { name: "web", exact: true }).click();
    const confirm = page.getByLabel(/Type web to confirm/);
    await confirm.fill("wrong");
    await page.getByRole("button", { name: "Delete pod" }).click();
    await page.getByText("Type the name exactly as shown.").waitFor();
    await confirm.fill("web");
    await page.getByRole("button", { name: "Delete pod" }).click();
    await page.waitForURL("**/pods");
    await page.getByRole("link", { name: "shop" }).waitFor();
    await waitFor(async () => !(await api("GET", "/v1/pods")).json().some((p: any) => p.name === "web"));

    assert.equal((await api("PATCH", "/v1/me", { locale: "ko" })).statusCode, 200);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole("heading", { name: "팟", level: 1 }).waitFor();
    await shot(page, "52-pods-ko-phone");
    await page.getByRole("link", { name: "shop" }).click();
    await page.locator("h1 [data-state='running']").waitFor();
    await page.getByText("실시간으로 따라가는 중").waitFor();
    await shot(page, "53-pod-ko-phone");
    await page.getByRole("link", { name: "팟 그룹" }).focus();
    await page.keyboard.press("Tab");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.notEqual(outline, "none", "the focused element shows its focus");
    // chromium logs every 4xx; the 402 of the unpaid volume above was provoked on purpose (and shown in words), and
    // a logs poll still in flight when the deleted pod's container went answers 400 not_running
    assert.deepEqual(
      errors.filter((e) => !/status of 402/.test(e) && !/status of 400: GET \/v1\/pods\/[^/]+\/logs$/.test(e)),
      [],
    );
  });
});
