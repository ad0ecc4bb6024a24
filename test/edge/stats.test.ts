/**
 * Statistics: real requests through the edge to pods and pod groups served by the apps area's route source (pod
 * rows in the store, plain HTTP servers as their replicas), counted in memory, flushed every EDGE_STATS_FLUSH_MS,
 * read back through GET /v1/pods/{id}/stats, /v1/pod-groups/{id}/stats and /v1/static/{slug}/stats.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { call, expectError, scopedKey, signup } from "../helpers/app.js";
import { APPS_DOMAIN, edgeApp, request, within, type EdgeApp } from "./lib.js";
import { addStats } from "../../src/edge/stats/repo.js";
import { BUCKETS, emptyHistogram } from "../../src/edge/stats/histogram.js";

let e: EdgeApp;
let second: EdgeApp;
let app: http.Server;
let address: string;
let user: { token: string; id: string };
const ids: Record<string, string> = {};
const OK_BODY = "x".repeat(1000);

/** A replica: /ok 1000 bytes, /missing 404, /fail 500, /sleep/<ms> answers after ms. */
async function replica(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (url === "/missing") return void res.writeHead(404).end("no such page");
    if (url === "/fail") return void res.writeHead(500).end("broken");
    const sleep = /^\/sleep\/(\d+)$/.exec(url);
    if (sleep) return void setTimeout(() => res.end("slept"), Number(sleep[1]));
    res.writeHead(200, { "content-type": "text/plain" }).end(OK_BODY);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return server;
}

/** One request on a connection of its own, returning the exact number of bytes the visitor received. */
function raw(port: number, host: string, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => {
      const all = Buffer.concat(chunks);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(all.toString())?.[1]), bytes: all.length });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

async function pod(slug: string, owner: string, opts: { address?: string; groupId?: string } = {}): Promise<string> {
  const id = randomUUID();
  await e.t.db.query(
    `INSERT INTO pods (id, owner_kind, owner_id, account_id, name, slug, image, env_sealed, size, desired_state, state,
                       address, group_id)
     VALUES ($1, 'account', $2, $2, $3, $3, 'img:v1', 'x', 'nano', 'running', $4, $5, $6)`,
    [id, owner, slug, opts.address ? "running" : "creating", opts.address ?? null, opts.groupId ?? null],
  );
  return id;
}

async function group(slug: string, owner: string): Promise<string> {
  const id = randomUUID();
  await e.t.db.query(
    `INSERT INTO pod_groups (id, owner_kind, owner_id, account_id, name, slug, spec, replica_min, replica_max,
                             target_cpu_percent, desired_replicas, desired_state)
     VALUES ($1, 'account', $2, $2, $3, $3, '{}', 1, 1, 50, 1, 'running')`,
    [id, owner, slug],
  );
  return id;
}

const host = (slug: string) => `${slug}.${APPS_DOMAIN}`;
const stats = (url: string, token = user.token) => call(e.t.app, { url, token });
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

before(async () => {
  e = await edgeApp({ env: { EDGE_STATS_FLUSH_MS: "100" } });
  second = await edgeApp({ databaseUrl: e.t.url, env: { EDGE_STATS_FLUSH_MS: "100" } });
  app = await replica();
  address = `127.0.0.1:${(app.address() as AddressInfo).port}`;
  user = await signup(e.t.app);
  ids.web = await pod("stats-web", user.id, { address });
  ids.lat = await pod("stats-lat", user.id, { address });
  ids.both = await pod("stats-both", user.id, { address });
  ids.quiet = await pod("stats-quiet", user.id, { address });
  ids.group = await group("stats-group", user.id);
  ids.member = await pod("stats-group-m1", user.id, { groupId: ids.group });
  // a static site, found the way the static area's lookup will (by slug or id within the owner)
  ids.site = randomUUID();
  e.t.platform.kernel.addInstances({
    resource: "static",
    find: async (owner, ref) =>
      owner.id === user.id && (ref === "stats-site" || ref === ids.site) ? { id: ids.site, slug: "stats-site" } : null,
  });
});

after(async () => {
  await second?.close();
  await e?.close();
  app?.closeAllConnections();
  await new Promise((r) => app?.close(r));
});

test("requests, 4xx, 5xx and bytes out of a pod are counted per day and flushed without a write per request", async () => {
  let bytes = 0;
  for (let i = 0; i < 6; i++) {
    const r = await raw(e.port, host("stats-web"), "/ok");
    assert.equal(r.status, 200);
    assert.ok(r.bytes > OK_BODY.length);
    bytes += r.bytes;
  }
  for (const [path, status, n] of [
    ["/missing", 404, 3],
    ["/fail", 500, 2],
  ] as const) {
    for (let i = 0; i < n; i++) {
      const r = await raw(e.port, host("stats-web"), path);
      assert.equal(r.status, status);
      bytes += r.bytes;
    }
  }
  // an unknown host names no app: not recorded anywhere
  for (let i = 0; i < 4; i++) assert.equal((await request(e.port, host("stats-nobody"))).status, 404);

  await within("the flush to store the counts", 3000, async () => {
    return (await stats("/v1/pods/stats-web/stats")).json().totals.requests === 11;
  });
  const body = (await stats("/v1/pods/stats-web/stats")).json();
  assert.equal(body.days, 7);
  assert.equal(body.to, today());
  assert.equal(body.from, daysAgo(6));
  assert.deepEqual(
    body.daily.map((d: { date: string }) => d.date),
    Array.from({ length: 7 }, (_, i) => daysAgo(6 - i)),
  );
  const day = body.daily[6];
  assert.equal(day.date, today());
  assert.equal(day.requests, 11);
  assert.equal(day.errors_4xx, 3);
  assert.equal(day.errors_5xx, 2);
  // the edge counts what it wrote to the visitor's socket: exactly what the visitor received
  assert.equal(day.bytes_out, bytes);
  assert.deepEqual({ ...body.totals }, Object.fromEntries(Object.entries(day).filter(([k]) => k !== "date")));
  for (const quiet of body.daily.slice(0, 6))
    assert.deepEqual(quiet, {
      date: quiet.date,
      requests: 0,
      errors_4xx: 0,
      errors_5xx: 0,
      p50_ms: null,
      p95_ms: null,
      bytes_out: 0,
    });
  // by id as well as by slug
  assert.equal((await stats(`/v1/pods/${ids.web}/stats`)).json().totals.requests, 11);
  // one row for the pod's day, none for the unknown host
  const { rows } = await e.t.db.query("SELECT target_kind, target_id FROM site_stats");
  assert.deepEqual(rows, [{ target_kind: "pod", target_id: ids.web }]);
});

test("p50 and p95 come from the latency buckets: half fast answers, half after 200 ms", async () => {
  for (let i = 0; i < 10; i++) assert.equal((await request(e.port, host("stats-lat"), { path: "/ok" })).status, 200);
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      assert.equal((await request(e.port, host("stats-lat"), { path: "/sleep/200" })).status, 200);
    }),
  );
  await e.edge.stats.flush();
  const { totals, daily } = (await stats("/v1/pods/stats-lat/stats")).json();
  assert.equal(totals.requests, 20);
  // rank 10 of 20 is the slowest fast answer; rank 19 one of the slept ones (buckets are about 19 % wide)
  // upper bounds leave room for a loaded machine (CI runs test files side by side); the split is what is asserted
  assert.ok(totals.p50_ms < 180, `p50 ${totals.p50_ms}`);
  assert.ok(totals.p95_ms >= 180 && totals.p95_ms <= 2000, `p95 ${totals.p95_ms}`);
  assert.equal(daily[6].p95_ms, totals.p95_ms);
});

test("a pod group without a healthy member answers 503, counted as 5xx of the group", async () => {
  for (let i = 0; i < 3; i++) {
    const r = await request(e.port, host("stats-group"));
    assert.equal(r.status, 503);
  }
  await e.edge.stats.flush();
  const byId = (await stats(`/v1/pod-groups/${ids.group}/stats`)).json();
  assert.equal(byId.totals.requests, 3);
  assert.equal(byId.totals.errors_5xx, 3);
  assert.ok(byId.totals.bytes_out > 0);
  assert.equal((await stats("/v1/pod-groups/stats-group/stats")).json().totals.errors_5xx, 3);
  // the pods lookup finds groups too, yet a group is no pod and a pod no group
  expectError(await stats("/v1/pods/stats-group/stats"), 404, "not_found");
  expectError(await stats("/v1/pod-groups/stats-web/stats"), 404, "not_found");
  // a member pod has its own (empty) statistics: the group's host is the group's
  assert.equal((await stats(`/v1/pods/${ids.member}/stats`)).json().totals.requests, 0);
});

test("two edge processes count the same pod; their flushes add up in one row", async () => {
  await Promise.all([
    ...Array.from({ length: 5 }, () => request(e.port, host("stats-both"), { path: "/ok" })),
    ...Array.from({ length: 7 }, () => request(second.port, host("stats-both"), { path: "/missing" })),
  ]);
  await Promise.all([e.edge.stats.flush(), second.edge.stats.flush()]);
  const { totals } = (await stats("/v1/pods/stats-both/stats")).json();
  assert.equal(totals.requests, 12);
  assert.equal(totals.errors_4xx, 7);
  const { rows } = await e.t.db.query<{ requests: number; latency: string[] }>(
    "SELECT requests, latency FROM site_stats WHERE target_id = $1",
    [ids.both],
  );
  assert.equal(rows.length, 1);
  assert.equal(rows[0].requests, 12);
  assert.equal(rows[0].latency.length, BUCKETS);
  assert.equal(
    rows[0].latency.reduce((s, c) => s + Number(c), 0),
    12,
  );
});

test("the window: every day of 7, 30 or 90 present, older days outside it, other values refused", async () => {
  const hist = (bucket: number, n: number) => Object.assign(emptyHistogram(), { [bucket]: n });
  const row = (day: string, requests: number, bucket: number) => ({
    kind: "pod",
    id: ids.quiet,
    day,
    owner: { kind: "account" as const, id: user.id },
    requests,
    status4xx: 1,
    status5xx: 0,
    bytesOut: 100 * requests,
    latency: hist(bucket, requests),
  });
  await addStats(e.t.db, [row(daysAgo(3), 4, 10), row(daysAgo(40), 6, 30)]);
  const week = (await stats("/v1/pods/stats-quiet/stats?days=7")).json();
  assert.equal(week.daily.length, 7);
  assert.equal(week.daily[3].date, daysAgo(3));
  assert.equal(week.daily[3].requests, 4);
  assert.equal(week.totals.requests, 4);
  assert.equal(week.totals.bytes_out, 400);
  const month = (await stats("/v1/pods/stats-quiet/stats?days=30")).json();
  assert.equal(month.daily.length, 30);
  assert.equal(month.from, daysAgo(29));
  assert.equal(month.totals.requests, 4);
  const quarter = (await stats("/v1/pods/stats-quiet/stats?days=90")).json();
  assert.equal(quarter.daily.length, 90);
  assert.equal(quarter.totals.requests, 10);
  assert.equal(quarter.totals.errors_4xx, 2);
  // 4 answers in bucket 10 (4.8-5.7 ms), 6 in bucket 30 (152-181 ms): the median is a slow one
  assert.ok(quarter.totals.p50_ms >= 152 && quarter.totals.p50_ms < 181, `p50 ${quarter.totals.p50_ms}`);
  assert.ok(week.totals.p95_ms >= 4.7 && week.totals.p95_ms <= 5.7, `p95 ${week.totals.p95_ms}`);
  for (const days of ["8", "0", "365", "abc", "7.5"])
    expectError(await stats(`/v1/pods/stats-quiet/stats?days=${days}`), 400, "invalid_request");
});

test("another owner's app is 404; instance-limited keys read only what they cover", async () => {
  const other = await signup(e.t.app);
  expectError(await stats("/v1/pods/stats-web/stats", other.token), 404, "not_found");
  expectError(await stats(`/v1/pods/${ids.web}/stats`, other.token), 404, "not_found");
  expectError(await stats("/v1/pod-groups/stats-group/stats", other.token), 404, "not_found");
  expectError(await stats("/v1/static/stats-site/stats", other.token), 404, "not_found");
  expectError(await stats("/v1/pods/no-such-pod/stats"), 404, "not_found");

  const webKey = await scopedKey(e.t.app, user.token, ["pods:read:stats-web"]);
  assert.equal((await stats(`/v1/pods/${ids.web}/stats`, webKey)).statusCode, 200);
  assert.equal((await stats("/v1/pods/stats-web/stats", webKey)).statusCode, 200);
  expectError(await stats("/v1/pods/stats-lat/stats", webKey), 403, "scope_insufficient");
  expectError(await stats("/v1/pod-groups/stats-group/stats", webKey), 403, "scope_insufficient");
  expectError(await stats("/v1/static/stats-site/stats", webKey), 403, "scope_insufficient");

  // a group's id covers the group and its members
  const groupKey = await scopedKey(e.t.app, user.token, [`pods:read:${ids.group}`]);
  assert.equal((await stats("/v1/pod-groups/stats-group/stats", groupKey)).statusCode, 200);
  assert.equal((await stats(`/v1/pods/${ids.member}/stats`, groupKey)).statusCode, 200);
  expectError(await stats("/v1/pods/stats-web/stats", groupKey), 403, "scope_insufficient");

  const siteKey = await scopedKey(e.t.app, user.token, ["static:read:stats-site"]);
  assert.equal((await stats("/v1/static/stats-site/stats", siteKey)).statusCode, 200);
  assert.equal((await stats(`/v1/static/${ids.site}/stats`, siteKey)).statusCode, 200);
  expectError(await stats("/v1/pods/stats-web/stats", siteKey), 403, "scope_insufficient");
  const staticKey = await scopedKey(e.t.app, user.token, ["static:read"]);
  assert.equal((await stats("/v1/static/stats-site/stats", staticKey)).statusCode, 200);
  expectError(await stats("/v1/static/other-site/stats", staticKey), 404, "not_found");
});

test("a static site's answers are counted under its id and read by slug", async () => {
  const target = {
    kind: "site",
    id: ids.site,
    owner: { kind: "account" as const, id: user.id },
    upstreams: [],
    visibility: "public" as const,
  };
  // what the edge's static branch reports for each answered file (proxy.ts observe)
  for (const [status, ms, bytes] of [
    [200, 2, 1200],
    [304, 1, 150],
    [404, 3, 400],
  ] as const)
    e.edge.stats.record({ host: host("stats-site"), target, status, ms, bytes });
  await e.edge.stats.flush();
  const { totals } = (await stats("/v1/static/stats-site/stats?days=30")).json();
  assert.deepEqual(
    { requests: totals.requests, e4: totals.errors_4xx, e5: totals.errors_5xx, bytes: totals.bytes_out },
    { requests: 3, e4: 1, e5: 0, bytes: 1750 },
  );
});
