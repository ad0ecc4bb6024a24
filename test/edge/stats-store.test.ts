/**
 * The statistics aggregator against the real store: exact merging of many flushes from several processes, a failed
 * flush keeping its counts (within a bound), the final flush at stop, an owner's apps in one query, pruning.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import pino from "pino";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { StatsAggregator } from "../../src/edge/stats/aggregator.js";
import { addStats, ownerDaily, targetDaily, type StatsRow } from "../../src/edge/stats/repo.js";
import { bucketOf, emptyHistogram, percentile } from "../../src/edge/stats/histogram.js";
import { statsJobs } from "../../src/edge/stats/service.js";
import type { EdgeTarget } from "../../src/kernel/area.js";

let t: TestApp;
const log = pino({ level: "silent" });
const owner = { kind: "account" as const, id: randomUUID() };
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

const target = (kind = "pod", id: string = randomUUID(), o = owner): EdgeTarget => ({
  kind,
  id,
  owner: o,
  upstreams: [],
  visibility: "public",
});
const seen = (tg: EdgeTarget, status: number, ms: number, bytes = 100) => ({
  host: "h",
  target: tg,
  status,
  ms,
  bytes,
});
const aggregator = (write = (rows: StatsRow[]) => addStats(t.db, rows), extra = {}) =>
  new StatsAggregator({ flushMs: 60_000, write, log, ...extra });
const todayOf = async (tg: EdgeTarget) => (await targetDaily(t.db, tg, today(), today()))[0];

before(async () => {
  t = await createTestApp();
});

after(async () => {
  await t?.close();
});

test("buckets and percentiles: fixed log scale, interpolated by rank", () => {
  assert.equal(bucketOf(0), 0);
  assert.equal(bucketOf(0.99), 0);
  assert.equal(bucketOf(1), 1);
  assert.equal(bucketOf(2), 5);
  assert.equal(bucketOf(100), 27); // [90.5, 107.6)
  assert.equal(bucketOf(1e9), 79);
  assert.equal(percentile(emptyHistogram(), 0.5), null);
  const h = emptyHistogram();
  h[bucketOf(100)] = 90;
  h[bucketOf(1000)] = 10;
  assert.ok(Math.abs(percentile(h, 0.5)! - 100) < 10);
  assert.ok(Math.abs(percentile(h, 0.95)! - 1000) < 200);
});

test("two processes' aggregators, several flushes each, add up exactly in one row per app and day", async () => {
  const tg = target();
  const [a, b] = [aggregator(), aggregator()];
  const mix = [0.5, 3, 3, 40, 250, 1200];
  for (let round = 0; round < 3; round++) {
    for (const ms of mix) a.record(seen(tg, 200, ms, 10));
    for (const ms of mix) b.record(seen(tg, round === 0 ? 404 : 502, ms * 2, 20));
    await Promise.all([a.flush(), b.flush()]);
  }
  const row = await todayOf(tg);
  assert.equal(row.requests, 36);
  assert.equal(row.status4xx, 6);
  assert.equal(row.status5xx, 12);
  assert.equal(row.bytesOut, 18 * 10 + 18 * 20);
  const expected = emptyHistogram();
  for (const ms of mix) {
    expected[bucketOf(ms)] += 3;
    expected[bucketOf(ms * 2)] += 3;
  }
  assert.deepEqual(row.latency, expected);
  const { rows } = await t.db.query("SELECT 1 FROM site_stats WHERE target_id = $1", [tg.id]);
  assert.equal(rows.length, 1);
});

test("a failed flush keeps its counts for the next one, bounded by maxKeys", async () => {
  const [x, y, z] = [target(), target(), target()];
  let fail = true;
  const agg = aggregator(
    async (rows) => {
      if (fail) throw new Error("store down");
      await addStats(t.db, rows);
    },
    { maxKeys: 2 },
  );
  for (let i = 0; i < 3; i++) agg.record(seen(x, 200, 5));
  await agg.flush(); // fails: kept
  assert.equal(agg.failures, 1);
  assert.equal(agg.held, 1);
  assert.equal(await todayOf(x), undefined);
  // more for the same app, and a second app, while the store is down
  agg.record(seen(x, 500, 5));
  agg.record(seen(y, 200, 5));
  // a third app does not fit (2 keys): dropped and counted
  agg.record(seen(z, 200, 5));
  assert.equal(agg.dropped, 1);
  await agg.flush(); // fails again: still kept, merged
  assert.equal(agg.held, 2);
  fail = false;
  await agg.flush();
  assert.equal(agg.held, 0);
  assert.deepEqual([(await todayOf(x)).requests, (await todayOf(x)).status5xx, (await todayOf(y)).requests], [4, 1, 1]);
  assert.equal(await todayOf(z), undefined);
});

test("counts arriving during a flush go into the next; the timer flushes; stop flushes what is left", async () => {
  const tg = target("group");
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  const agg = aggregator(
    async (rows) => {
      if (++calls === 1) await gate;
      await addStats(t.db, rows);
    },
    { flushMs: 50 },
  );
  agg.record(seen(tg, 200, 1));
  const first = agg.flush();
  agg.record(seen(tg, 200, 1)); // while the first flush is under way
  const secondFlush = agg.flush(); // waits for the first
  release();
  await Promise.all([first, secondFlush]);
  assert.equal((await todayOf(tg)).requests, 2);
  agg.start();
  agg.record(seen(tg, 200, 1));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await todayOf(tg)).requests, 3);
  agg.record(seen(tg, 200, 1));
  await agg.stop();
  assert.equal((await todayOf(tg)).requests, 4);
  // targets that are not store ids (a test's route source) and unknown hosts are not recorded
  agg.record({ host: "h", target: null, status: 404, ms: 1, bytes: 10 });
  agg.record(seen(target("pod", "id-test"), 200, 1));
  assert.equal(agg.held, 0);
});

test("an owner's apps, every kind or some, in one query (for organizations)", async () => {
  const org = { kind: "org" as const, id: randomUUID() };
  const other = { kind: "org" as const, id: randomUUID() };
  const row = (kind: string, id: string, o: typeof org, day: string, requests: number): StatsRow => ({
    kind,
    id,
    day,
    owner: o,
    requests,
    status4xx: 0,
    status5xx: 0,
    bytesOut: requests,
    latency: Object.assign(emptyHistogram(), { [10]: requests }),
  });
  const [site, pod] = [randomUUID(), randomUUID()];
  await addStats(t.db, [
    row("site", site, org, daysAgo(1), 5),
    row("site", site, org, daysAgo(100), 9),
    row("pod", pod, org, today(), 3),
    row("site", randomUUID(), other, today(), 7),
  ]);
  const all = await ownerDaily(t.db, org, daysAgo(89), today());
  assert.deepEqual(
    all.map((r) => [r.kind, r.id, r.day, r.requests]),
    [
      ["pod", pod, today(), 3],
      ["site", site, daysAgo(1), 5],
    ],
  );
  const sites = await ownerDaily(t.db, org, daysAgo(89), today(), ["site"]);
  assert.deepEqual(
    sites.map((r) => r.id),
    [site],
  );
});

test("the daily prune drops days older than EDGE_STATS_KEEP_DAYS", async () => {
  const id = randomUUID();
  const row = (day: string): StatsRow => ({
    kind: "pod",
    id,
    day,
    owner,
    requests: 1,
    status4xx: 0,
    status5xx: 0,
    bytesOut: 1,
    latency: emptyHistogram(),
  });
  await addStats(t.db, [row(daysAgo(91)), row(daysAgo(89)), row(today())]);
  const [job] = statsJobs(t.db, 90);
  assert.equal(job.cron, "23 3 * * *");
  await job.handler({}, { id: "test", retryCount: 0 });
  const left = await targetDaily(t.db, { kind: "pod", id }, daysAgo(400), today());
  assert.deepEqual(
    left.map((r) => r.day),
    [daysAgo(89), today()],
  );
});
