import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { listeningApp } from "../clients/lib.js";
import { waitPod } from "../apps/lib.js";
import { haveChromium, launch, openPage, shot, signUp, waitUntil } from "./browser.js";

/**
 * The console's deploys parts (issue 29) in chromium on real podman: a pod's secrets as fingerprints, its
 * releases with a Roll back button that brings release 1 back through the safe rollout; a cron job created in
 * the page, run now, its run's exit code and logs.
 */
describe(
  "console deploys: releases, secrets, cron jobs",
  { skip: haveChromium ? false : "chromium is not installed" },
  () => {
    let t: TestApp & { baseUrl: string };
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let page: Page;
    let errors: string[];
    let token = "";
    const SECRET = "console-secret-4f2a9c";
    const email = `deploys-${Date.now()}@example.com`;
    const password = "correct horse battery";
    const api = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown) =>
      call(t.app, { method, url, token, body });

    before(async () => {
      t = await listeningApp({
        startJobs: true,
        env: {
          APPS_ALLOW_LOCAL_IMAGES: "1",
          APPS_SWEEP_MS: "500",
          APPS_DRAIN_MS: "0",
          EDGE_PORT: "0",
          REGISTRY_PORT: "0",
        },
      });
      ({ browser, close: closeBrowser } = await launch());
      ({ page, errors } = await openPage(browser));
    });
    after(async () => {
      await closeBrowser?.();
      if (token) {
        for (const p of (await api("GET", "/v1/pods")).json()) await api("DELETE", `/v1/pods/${p.id}`);
        for (const j of (await api("GET", "/v1/cron-jobs")).json()) await api("DELETE", `/v1/cron-jobs/${j.id}`);
        await new Promise((r) => setTimeout(r, 1500));
      }
      await t?.close();
    });

    test("a pod's secrets show as fingerprints; Roll back brings release 1 back", async () => {
      const [v1, v2] = [await testImage("TEST_IMAGE_HTTPD_V1"), await testImage("TEST_IMAGE_HTTPD_V2")];
      await signUp(page, t.baseUrl, email, password);
      token = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json().token;
      const made = await api("POST", "/v1/pods", {
        name: "web",
        image: v1,
        port: 8080,
        secret_env: { API_KEY: SECRET },
      });
      assert.equal(made.statusCode, 201, made.body);
      const pod = made.json();
      await waitPod(t, token, pod.id, (p) => p.state === "running");
      assert.equal((await api("PATCH", `/v1/pods/${pod.id}`, { image: v2 })).statusCode, 200);
      await waitPod(t, token, pod.id, (p) => p.serving_generation === p.generation && p.release === 2);

      await page.goto(`${t.baseUrl}/pods/${pod.id}`);
      const secrets = page.getByTestId("secrets");
      await secrets.getByText(pod.secret_env.API_KEY.fingerprint).waitFor();
      assert.ok(!(await page.content()).includes(SECRET));
      const releases = page.getByTestId("releases");
      await releases.locator("tr[data-release='2']").waitFor();
      await page.getByRole("button", { name: "Roll back to release 1" }).click();
      await waitUntil(async () => {
        const p = (await api("GET", `/v1/pods/${pod.id}`)).json();
        return p.image === v1 && p.serving_generation === p.generation;
      }, 60_000);
      await releases.locator("tr[data-release='3']").waitFor();
      await shot(page, "deploys-pod-releases");
    });

    test("a cron job made in the page runs now; its run shows exit code and logs", async () => {
      const image = await testImage("TEST_IMAGE_HTTPD_V1");
      await page.goto(`${t.baseUrl}/cron-jobs`);
      const form = page.getByTestId("new-cron-job");
      await form.getByLabel("Name").fill("nightly");
      await form.getByLabel("Image").fill(image);
      await form.getByLabel("Command").fill('/bin/busybox sh -c "echo from-cron; exit 2"');
      await form.getByLabel("Schedule").fill("@daily");
      await form.getByRole("button", { name: "New cron job" }).click();
      await page.getByTestId("cron-jobs").getByRole("link", { name: "nightly" }).click();
      await page.getByRole("heading", { name: "nightly", level: 1 }).waitFor();
      await page.getByRole("button", { name: "Run now" }).click();
      const failed = page.getByTestId("cron-runs").locator("tr[data-state='failed']");
      await failed.waitFor({ timeout: 60_000 });
      assert.equal((await failed.locator("td").nth(2).textContent())?.trim(), "2");
      await failed.getByRole("button", { name: "Show logs" }).click();
      await page.getByTestId("cron-run-logs").getByText("from-cron").waitFor();
      await shot(page, "deploys-cron-job");
      assert.deepEqual(errors, []);
    });
  },
);
