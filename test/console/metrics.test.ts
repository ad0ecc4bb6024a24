import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { call, type TestApp } from "../helpers/app.js";
import { listeningApp } from "../clients/lib.js";
import { addMinuteStats } from "../../src/edge/stats/repo.js";
import { bucketOf, emptyHistogram } from "../../src/edge/stats/histogram.js";
import { addDatabaseSamples } from "../../src/metrics/series-repo.js";
import { haveChromium, launch, openPage, shot, signUp } from "./browser.js";

/**
 * The console's metrics charts in chromium: a site's and a database's pages draw a line per figure from their
 * per-minute series (the rows the edge and the sampler write, stored for the last 10 minutes here), with the
 * latest and highest values in words, and reload over another period. Pods and groups use the same card.
 */
describe("console metrics charts in chromium", { skip: haveChromium ? false : "chromium is not installed" }, () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let errors: string[];
  const email = `metrics-${Date.now()}@example.com`;
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

  test("a site's and a database's pages chart their series", async () => {
    await signUp(page, t.baseUrl, email, password);
    const login = (await call(t.app, { method: "POST", url: "/v1/auth/login", body: { email, password } })).json();
    const token = login.token;
    const me = (await call(t.app, { url: "/v1/me", token })).json();
    const owner = { kind: "account" as const, id: me.id };
    const site = (await call(t.app, { method: "POST", url: "/v1/static", token, body: { name: "charted" } })).json();
    const db = (
      await call(t.app, { method: "POST", url: "/v1/databases", token, body: { name: "charted-db" } })
    ).json();
    const now = Date.now();
    const minutes = Array.from({ length: 10 }, (_, i) => now - (now % 60_000) - (9 - i) * 60_000);
    await addMinuteStats(
      t.db,
      minutes.map((minute, i) => {
        const latency = emptyHistogram();
        latency[bucketOf(20)] = 4;
        return {
          kind: "site",
          id: site.id,
          minute,
          owner,
          requests: 4 + i,
          status4xx: 0,
          status5xx: i % 3,
          bytesOut: 2048,
          latency,
        };
      }),
    );
    await addDatabaseSamples(
      t.db,
      minutes.map((minute, i) => ({
        databaseId: db.id,
        minute,
        sampledAt: minute,
        owner,
        connections: 3 + (i % 4),
        maxConnections: 100,
        commitsTotal: i * 600,
        blocksHitTotal: 0,
        blocksReadTotal: 0,
        commits: 600,
        blocksHit: 99,
        blocksRead: 1,
        coveredSeconds: 60,
        sizeBytes: 9_000_000,
        replicationLagBytes: null,
        replicationLagSeconds: null,
        baseBackupAgeSeconds: 3600 + i * 60,
        archivedWalAgeSeconds: 20,
      })),
    );

    await page.goto(`${t.baseUrl}/sites/${site.slug}`);
    const requests = page.locator('[data-testid="metrics-chart"][data-key="requests"]');
    await requests.getByText("now 13 · peak 13").waitFor();
    // a point per minute of the last hour (quiet minutes are 0), the newest and highest at the top of the box
    const d = (await requests.locator("path").getAttribute("d")) ?? "";
    assert.ok([60, 61].includes(d.split(/[ML]/).filter(Boolean).length), d);
    assert.match(d, /L300\.0 0\.0$/);
    assert.equal(await page.locator('[data-testid="metrics-chart"]').count(), 4);
    await page.getByRole("button", { name: "24h" }).click();
    await requests.getByText(/now \d+ · peak \d+/).waitFor();
    await shot(page, "90-site-metrics");

    await page.goto(`${t.baseUrl}/databases/${db.id}`);
    const conns = page.locator('[data-testid="metrics-chart"][data-key="connections"]');
    await conns.getByText("peak 6").waitFor();
    await page.locator('[data-testid="metrics-chart"][data-key="commits_per_second"]').getByText("now 10/s").waitFor();
    await page
      .locator('[data-testid="metrics-chart"][data-key="cache_hit_ratio"]')
      .getByText(/now 99 %/)
      .waitFor();
    // no HA: the lag chart has no line
    assert.equal(await page.locator('[data-testid="metrics-chart"][data-key="replication_lag_bytes"] path').count(), 0);
    await shot(page, "91-database-metrics");
    assert.deepEqual(errors, []);
  });
});
