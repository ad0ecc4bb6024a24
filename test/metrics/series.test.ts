/**
 * The series of static sites and databases through HTTP on real components: requests through the real edge to a
 * real static site show in its requests, 4xx, bytes and latency; a real managed PostgreSQL's connections and
 * commits show in its series once the sampling pass runs (driven directly); the hourly roll-up's hour rows are the
 * sums and highest values of their minutes; retention deletes what is past 7 days (minutes) and 90 days (hours);
 * bad windows are 400 with a sentence.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, OPERATOR_TOKEN, signup } from "../helpers/app.js";
import { connect, waitFor } from "../databases/lib.js";
import { createSite, deploy, get, staticApp, tarGz, type StaticApp } from "../static/lib.js";
import type { MetricsState } from "../../src/metrics/module.js";
import { addMinuteStats } from "../../src/edge/stats/repo.js";
import { emptyHistogram, bucketOf } from "../../src/edge/stats/histogram.js";
import { rollupEdgeHours } from "../../src/edge/stats/series-repo.js";
import { addDatabaseSamples, rollupRuntimeHours, type DatabaseSampleRow } from "../../src/metrics/series-repo.js";
import { pruneMetrics, rollupHours } from "../../src/metrics/rollup.js";

let s: StaticApp;
let user: { token: string; id: string };
let site: { id: string; slug: string };
let database: { id: string; slug: string; database_url: string };

const MIN = 60_000;
const HOUR = 3_600_000;
const api = (url: string) => call(s.t.app, { url, token: user.token });
const series = async (url: string) => {
  const res = await api(url);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};
const sum = (points: Record<string, number>[], key: string) => points.reduce((a, p) => a + (p[key] ?? 0), 0);
const iso = (ms: number) => new Date(ms).toISOString();

before(async () => {
  s = await staticApp({ startJobs: true });
  user = await signup(s.t.app);
  site = await createSite(s.t, user.token, { name: "metered-site", slug: "metered-site" });
  await deploy(s.t, user.token, site.slug, await tarGz({ "index.html": "<p>hello</p>".repeat(100) }));
  const created = await call(s.t.app, {
    method: "POST",
    url: "/v1/databases",
    token: user.token,
    body: { name: "metered-db" },
  });
  assert.equal(created.statusCode, 201, created.body);
  database = created.json();
  await waitFor(s.t, user.token, database.id, (d) => d.state === "running");
});
after(async () => s?.close());

test("a site's deployment going live is a deploy.succeeded event (the console's sites pages follow it)", async () => {
  const events = (await api(`/v1/events?type=deploy.succeeded&resource_id=${site.id}`)).json().items;
  assert.equal(events.length, 1, JSON.stringify(events));
  assert.deepEqual(events[0].resource, { kind: "static_site", id: site.id });
  assert.equal(events[0].data.slug, site.slug);
  assert.equal(events[0].data.rollback, false);
});

test("requests through the edge show in the site's requests, 4xx, bytes and latency", async () => {
  const answers = await Promise.all(
    ["/", "/", "/", "/", "/", "/missing", "/missing"].map((p) => get(s.port, site.slug, p)),
  );
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200, 404, 404],
  );
  await s.edge.stats.flush();
  const m = await series(`/v1/static/${site.slug}/metrics`);
  assert.equal(m.site_id, site.id);
  assert.equal(m.step, 60);
  assert.equal(sum(m.points, "requests"), 7);
  assert.equal(sum(m.points, "errors_4xx"), 2);
  assert.ok(sum(m.points, "bytes_out") > 5 * 1200, `bytes ${sum(m.points, "bytes_out")}`);
  const busy = m.points.find((p: { requests: number }) => p.requests > 0);
  assert.ok(busy.p50_ms !== null && busy.p95_ms >= busy.p50_ms, JSON.stringify(busy));
});

test("a database's connections and commits show in its series", async () => {
  const sampler = s.t.platform.state<MetricsState>("metrics");
  assert.equal(await sampler.sampleDatabases(), 1, "the running database is sampled");
  const held = await Promise.all([connect(database.database_url), connect(database.database_url)]);
  try {
    await held[0].query("CREATE TABLE ticks (n int)");
    for (let i = 0; i < 40; i++) await held[0].query("INSERT INTO ticks VALUES ($1)", [i]);
    await new Promise((r) => setTimeout(r, 300)); // the statistics collector's flush of the sessions' counters
    await sampler.sampleDatabases();
    const m = await series(`/v1/databases/${database.slug}/metrics`);
    assert.equal(m.database_id, database.id);
    const last = m.points.filter((p: { connections: number | null }) => p.connections !== null).at(-1);
    assert.ok(last, "a sampled point");
    assert.ok(last.connections >= 2, `connections ${last.connections}`);
    assert.ok(last.max_connections > last.connections);
    assert.ok(last.commits_per_second > 0, `commits/s ${last.commits_per_second}`);
    assert.ok(last.size_bytes > 1_000_000, `size ${last.size_bytes}`);
    assert.ok(last.cache_hit_ratio > 0 && last.cache_hit_ratio <= 1, `hit ratio ${last.cache_hit_ratio}`);
    assert.equal(last.replication_lag_bytes, null, "no HA: no lag");
  } finally {
    await Promise.all(held.map((c) => c.end()));
  }
  const text = (await call(s.t.app, { url: "/v1/operator/metrics", token: OPERATOR_TOKEN })).body;
  assert.match(
    text,
    new RegExp(`^platform_database_connections\\{database="${database.id}",owner="account:${user.id}"\\} \\d+$`, "m"),
  );
  assert.match(
    text,
    new RegExp(`^platform_app_requests_5m\\{kind="site",app="${site.id}",owner="account:${user.id}"\\} 7$`, "m"),
  );
});

/** minute rows of the site and the database over [from, from + minutes), as the edge and the sampler write them */
async function seed(from: number, minutes: number) {
  const owner = { kind: "account" as const, id: user.id };
  const traffic = [];
  const samples: DatabaseSampleRow[] = [];
  for (let i = 0; i < minutes; i++) {
    const minute = from + i * MIN;
    const latency = emptyHistogram();
    latency[bucketOf(5 + i)] += 3;
    latency[bucketOf(200)] += 1;
    traffic.push({
      kind: "site",
      id: site.id,
      minute,
      owner,
      requests: 4,
      status4xx: i % 2,
      status5xx: 0,
      bytesOut: 1000 + i,
      latency,
    });
    samples.push({
      databaseId: database.id,
      minute,
      sampledAt: minute + 1000,
      owner,
      connections: 1 + (i % 7),
      maxConnections: 100,
      commitsTotal: 1000 + i * 60,
      blocksHitTotal: 0,
      blocksReadTotal: 0,
      commits: 60,
      blocksHit: 90,
      blocksRead: 10,
      coveredSeconds: 60,
      sizeBytes: 8_000_000 + i,
      replicationLagBytes: null,
      replicationLagSeconds: null,
      baseBackupAgeSeconds: 600 + i * 60,
      archivedWalAgeSeconds: 30,
    });
  }
  await addMinuteStats(s.t.db, traffic);
  await addDatabaseSamples(s.t.db, samples);
}

test("the hourly roll-up's hour rows are the sums and highest values of their minutes", async () => {
  const now = Date.now();
  // on a two-hour boundary: the 2-hour step's buckets are aligned to it (an odd start left one hour in the first)
  const start = now - (now % (2 * HOUR)) - 4 * HOUR;
  await seed(start, 120);
  const rolled = await rollupHours(s.t.db, now);
  assert.ok(
    rolled.rows >= 4 && rolled.to === now - (now % HOUR) - (now % HOUR < 2 * MIN ? HOUR : 0),
    JSON.stringify(rolled),
  );
  const window = `from=${iso(start)}&to=${iso(start + 2 * HOUR)}`;
  const siteMinutes = await series(`/v1/static/${site.slug}/metrics?${window}&step=60`);
  const siteHours = await series(`/v1/static/${site.slug}/metrics?${window}&step=3600`);
  assert.equal(siteMinutes.points.length, 120);
  assert.equal(siteHours.points.length, 2);
  for (const [h, hour] of siteHours.points.entries()) {
    const minutes = siteMinutes.points.slice(h * 60, h * 60 + 60);
    for (const key of ["requests", "errors_4xx", "bytes_out"]) assert.equal(hour[key], sum(minutes, key), key);
  }
  assert.equal(siteHours.points[0].requests, 240);
  const dbMinutes = await series(`/v1/databases/${database.id}/metrics?${window}&step=60`);
  const dbHours = await series(`/v1/databases/${database.id}/metrics?${window}&step=3600`);
  for (const [h, hour] of dbHours.points.entries()) {
    const minutes = dbMinutes.points.slice(h * 60, h * 60 + 60);
    const max = (key: string) => Math.max(...minutes.map((p: Record<string, number>) => p[key]));
    for (const key of ["connections", "size_bytes", "base_backup_age_seconds"]) assert.equal(hour[key], max(key), key);
    assert.equal(hour.commits_per_second, 1);
    assert.equal(hour.cache_hit_ratio, 0.9);
  }
  // a second run rolls nothing again; a 2-hour step over hour rows adds them
  assert.equal((await rollupHours(s.t.db, now)).rows, 0);
  const two = await series(`/v1/static/${site.slug}/metrics?${window}&step=7200`);
  assert.equal(two.points[0].requests, 480);
});

test("retention deletes minutes past 7 days and hours past 90, and keeps the rest", async () => {
  const now = Date.now();
  const hourAgo = (days: number) => now - (now % HOUR) - days * 86_400_000;
  await seed(hourAgo(91), 3);
  await seed(hourAgo(30), 3);
  await seed(hourAgo(8), 3);
  for (const at of [hourAgo(91), hourAgo(30)]) {
    await rollupEdgeHours(s.t.db, at, at + HOUR);
    await rollupRuntimeHours(s.t.db, at, at + HOUR);
  }
  const count = async (sql: string) => Number((await s.t.db.query<{ n: string }>(sql)).rows[0].n);
  const old = `now() - interval '7 days'`;
  assert.equal(await count(`SELECT count(*) AS n FROM edge_minute_stats WHERE minute < ${old}`), 9);
  assert.equal(await count(`SELECT count(*) AS n FROM database_hours`), 2 + 2);
  const pruned = await pruneMetrics(s.t.db, now);
  assert.equal(pruned.minutes, 9 + 9, JSON.stringify(pruned));
  assert.equal(pruned.hours, 2, JSON.stringify(pruned));
  assert.equal(await count(`SELECT count(*) AS n FROM edge_minute_stats WHERE minute < ${old}`), 0);
  assert.equal(await count(`SELECT count(*) AS n FROM database_samples WHERE minute < ${old}`), 0);
  assert.equal(await count(`SELECT count(*) AS n FROM edge_hour_stats WHERE hour < now() - interval '90 days'`), 0);
  // the 30-day-old hour is still there, through the API
  const month = await series(
    `/v1/static/${site.slug}/metrics?from=${iso(hourAgo(30))}&to=${iso(hourAgo(30) + HOUR)}&step=3600`,
  );
  assert.equal(month.points[0].requests, 12);
});

test("bad windows are 400 with a sentence; other kinds and accounts are 404", async () => {
  const bad = async (query: string, words: RegExp) => {
    for (const url of [`/v1/static/${site.slug}/metrics`, `/v1/databases/${database.id}/metrics`]) {
      const res = await api(`${url}?${query}`);
      expectError(res, 400, "bad_metrics_window");
      assert.match(res.json().error.message, words, query);
    }
  };
  const now = Date.now();
  await bad("step=90", /multiple|whole number of minutes/);
  await bad(`from=${iso(now)}&to=${iso(now - HOUR)}`, /before/);
  await bad(`from=${iso(now - 8 * 86_400_000)}&step=600`, /7 days/);
  await bad(`from=${iso(now - 91 * 86_400_000)}&step=3600`, /90 days/);
  await bad(`from=${iso(now - 2 * 86_400_000)}&step=60`, /1440 points/);
  expectError(await api(`/v1/static/${site.slug}/metrics?step=30`), 400);
  expectError(await api(`/v1/static/${site.slug}/metrics?from=yesterday`), 400);
  expectError(await api(`/v1/pod-groups/${database.id}/metrics`), 404, "not_found");
  const other = await signup(s.t.app);
  expectError(await call(s.t.app, { url: `/v1/databases/${database.id}/metrics`, token: other.token }), 404);
  expectError(await call(s.t.app, { url: `/v1/static/${site.slug}/metrics`, token: other.token }), 404);
});
