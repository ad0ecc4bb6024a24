import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFile, mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { run } from "../registry/lib.js";
import { httpGet, waitPod } from "../apps/lib.js";
import { BUSYBOX } from "../builds/lib.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";

/** A FROM scratch image around busybox-static: nothing is downloaded. Browsers send no file modes, hence --chmod. */
const httpd = (extra = "") => `FROM scratch
COPY --chmod=755 busybox /bin/busybox
COPY index.html /www/index.html
${extra}CMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]
`;

/**
 * The console's builds pages in chromium with the real builder (buildah) and registry: a folder with a Dockerfile
 * and busybox-static packed into a tar.gz in the page (CompressionStream), uploaded with progress, built with its
 * log followed live, image and digest shown; a build that updates a pod and links to it; a build cancelled with a
 * reason; Korean at a phone's width. Screenshots go to .test-artifacts/console/.
 */
describe("console builds pages in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  let token = "";
  let tmp: string;
  let firstImage = "";
  const pulled: string[] = [];
  const email = `builds-${Date.now()}@example.com`;
  const password = "correct horse battery";

  /** A build context folder: the Dockerfile, busybox, an index.html. */
  const context = async (name: string, dockerfile: string, index: string) => {
    const dir = path.join(tmp, name);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "Dockerfile"), dockerfile);
    await writeFile(path.join(dir, "index.html"), index);
    await copyFile(BUSYBOX, path.join(dir, "busybox"));
    return dir;
  };
  const newBuild = async (dir: string) => {
    await page.getByRole("link", { name: "Builds", exact: true }).click();
    await page.getByRole("link", { name: "New build" }).click();
    await page.getByTestId("folder-input").setInputFiles(dir);
    await page.getByTestId("picked").filter({ hasText: "3 files" }).waitFor();
  };
  const finished = () =>
    page.locator("h1 [data-state='succeeded'], h1 [data-state='failed']").waitFor({ timeout: 180_000 });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "console-builds-"));
    t = await listeningApp({
      startJobs: true,
      env: {
        APPS_ALLOW_LOCAL_IMAGES: "0",
        APPS_SWEEP_MS: "500",
        APPS_DRAIN_MS: "300",
        EDGE_PORT: "0",
        REGISTRY_PORT: "0",
        BUILD_POLL_MS: "200",
      },
    });
    ({ browser, close: closeBrowser } = await launch());
    ({ page, errors } = await openPage(browser));
  });
  after(async () => {
    await closeBrowser?.();
    if (token) {
      for (const p of (await call(t.app, { url: "/v1/pods", token })).json())
        await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token });
      await new Promise((r) => setTimeout(r, 1500));
    }
    await t?.close();
    for (const image of pulled) await run("podman", ["rmi", "--force", image]);
    await rm(tmp, { recursive: true, force: true });
  });

  test("a folder with a Dockerfile is packed in the page, built with its log live, image and digest shown", async () => {
    await signUp(page, t.baseUrl, email, password);
    token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json().token;
    await page.getByRole("link", { name: "Apps" }).click();
    await page.getByRole("link", { name: "Builds", exact: true }).click();
    await page.getByRole("heading", { name: "Builds", level: 1 }).waitFor();
    await page.getByText("No builds yet").waitFor();
    await shot(page, "80-builds-empty");

    await page.getByRole("link", { name: "New build" }).click();
    await page.getByRole("button", { name: "Upload and build" }).click();
    await page.getByText("Choose a folder or an archive to upload.").waitFor();
    const dir = await context("web", httpd(), "built from the console\n");
    await page.getByTestId("folder-input").setInputFiles(dir);
    await page.getByTestId("picked").filter({ hasText: "3 files" }).waitFor();
    await page.getByLabel("Dockerfile", { exact: true }).fill("docker/Dockerfile");
    await page.getByRole("button", { name: "Upload and build" }).click();
    await page.getByText("The folder has no docker/Dockerfile").waitFor();
    await page.getByLabel("Dockerfile", { exact: true }).fill("Dockerfile");
    await shot(page, "81-build-new");
    await page.getByRole("button", { name: "Upload and build" }).click();
    await page.waitForURL((u) => /^\/builds\/[^/]+$/.test(u.pathname) && u.pathname !== "/builds/new");
    await page.getByTestId("build-logs").filter({ hasText: "STEP 1/4: FROM scratch" }).waitFor({ timeout: 120_000 });
    await finished();
    const logs = (await page.getByTestId("build-logs").textContent())!;
    assert.match(logs, /STEP 2\/4: COPY --chmod=755 busybox \/bin\/busybox/);
    assert.match(logs, /==> pushing/);
    await page.locator("h1 [data-state='succeeded']").waitFor();
    firstImage = (await page.getByTestId("build-image").locator("code").textContent())!;
    assert.match(firstImage, /\/build:build-[0-9a-f-]+$/);
    assert.match((await page.getByTestId("build-digest").textContent())!, /sha256:[0-9a-f]{64}/);
    await page.getByText(/packed 3 files/).waitFor(); // the page's own step, recorded with the build
    await shot(page, "82-build-succeeded");
  });

  test("a build for a pod rolls it to the new image; the build links to the pod", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token,
      body: { name: "built-web", image: firstImage, port: 8080 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const pod = res.json();
    pulled.push(firstImage);
    await waitPod(t, token, pod.id, (p) => p.state === "running", 90_000);

    await newBuild(await context("web2", httpd(), "v2 from the console\n"));
    await page.getByLabel("App to update (optional)").selectOption(pod.slug);
    await page.getByRole("button", { name: "Upload and build" }).click();
    await page.waitForURL((u) => /^\/builds\/[^/]+$/.test(u.pathname) && u.pathname !== "/builds/new");
    await page.getByTestId("build-progress").waitFor();
    await shot(page, "83-build-running");
    await finished();
    await page.locator("h1 [data-state='succeeded']").waitFor();
    await page.getByText("Deployed", { exact: true }).waitFor();
    const image = (await page.getByTestId("build-image").locator("code").textContent())!;
    pulled.push(image);
    const rolled = await waitPod(
      t,
      token,
      pod.id,
      (p) => p.image === image && p.state === "running" && p.serving_generation === p.generation,
      90_000,
    );
    assert.equal((await httpGet(`http://${rolled.address}/`)).body, "v2 from the console\n");
    await page.getByRole("link", { name: pod.slug }).click();
    await page.waitForURL(`**/pods/${pod.slug}`);
    await page.locator("dd code", { hasText: image }).waitFor();
  });

  test("a running build is cancelled with a reason", async () => {
    await newBuild(await context("slow", httpd(`RUN ["/bin/busybox", "sleep", "60"]\n`), "slow\n"));
    await page.getByRole("button", { name: "Upload and build" }).click();
    await page.waitForURL((u) => /^\/builds\/[^/]+$/.test(u.pathname) && u.pathname !== "/builds/new");
    await page.getByTestId("build-logs").filter({ hasText: "sleep" }).waitFor({ timeout: 120_000 });
    await page.getByLabel("Reason (optional)").fill("wrong branch");
    await page.getByRole("button", { name: "Cancel build" }).click();
    await page.locator("h1 [data-state='cancelled']").waitFor({ timeout: 30_000 });
    await page.getByText("wrong branch").first().waitFor();
    await shot(page, "84-build-cancelled");
    await page.getByRole("link", { name: "← Builds" }).click();
    await page.locator("tbody [data-state]").nth(2).waitFor();
    await shot(page, "85-builds");
  });

  test("Korean at a phone's width; no console errors", async () => {
    assert.equal(
      (await call(t.app, { method: "PATCH", url: "/v1/me", token, body: { locale: "ko" } })).statusCode,
      200,
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole("heading", { name: "빌드", level: 1 }).waitFor();
    await shot(page, "86-builds-ko-phone");
    await page.locator("tbody a").last().click();
    await page.getByRole("heading", { name: /빌드 [0-9a-f]{8}/, level: 1 }).waitFor();
    await page.getByText("빌드 로그").waitFor();
    await shot(page, "87-build-ko-phone");
    assert.deepEqual(errors, []);
  });
});
