import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { addStats, type StatsRow } from "../../src/edge/stats/repo.js";
import { bucketOf, emptyHistogram } from "../../src/edge/stats/histogram.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";

const DAY = 86_400_000;
const day = (ago: number) => new Date(Date.now() - ago * DAY).toISOString().slice(0, 10);

/** One day's counts as the edge flushes them: `ms` response times, statuses 200 except the given errors. */
function row(
  site: { id: string },
  owner: StatsRow["owner"],
  ago: number,
  c: { requests: number; s4?: number; s5?: number; bytes?: number; ms: number },
): StatsRow {
  const latency = emptyHistogram();
  latency[bucketOf(c.ms)] = c.requests;
  return {
    kind: "site",
    id: site.id,
    day: day(ago),
    owner,
    requests: c.requests,
    status4xx: c.s4 ?? 0,
    status5xx: c.s5 ?? 0,
    bytesOut: c.bytes ?? c.requests * 1000,
    latency,
  };
}

describe("organization site statistics", () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let a: { id: string; slug: string };
  let b: { id: string; slug: string };
  let personal: { id: string; slug: string };
  let foreign: { id: string; slug: string };

  const site = async (who: Person, headers: Record<string, string> = {}) => {
    const name = `st-${randomBytes(4).toString("hex")}`;
    const res = await call(t.app, { method: "POST", url: "/v1/static", token: who.token, headers, body: { name } });
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().id as string, slug: res.json().slug as string };
  };
  const get = (who: Person, url: string) => call(t.app, { url, token: who.token });

  before(async () => {
    t = await createTestApp();
    org = await makeOrg(t, { admins: 1, members: 1 });
    other = await makeOrg(t, { admins: 0, members: 0 });
    a = await site(org.members[0], ORG);
    b = await site(org.admins[0], ORG);
    personal = await site(org.members[0]);
    foreign = await site(other.owner, ORG);
    const mine = { kind: "org" as const, id: org.id };
    await addStats(t.db, [
      row(a, mine, 0, { requests: 100, s4: 5, s5: 1, ms: 20 }),
      row(a, mine, 3, { requests: 50, s5: 2, ms: 40 }),
      row(a, mine, 20, { requests: 7, ms: 10 }),
      row(a, mine, 60, { requests: 9, ms: 10 }),
      row(b, mine, 0, { requests: 30, s4: 3, ms: 200, bytes: 5 }),
      row(personal, { kind: "account", id: org.members[0].id }, 0, { requests: 1000, ms: 5 }),
      row(foreign, { kind: "org", id: other.id }, 0, { requests: 2000, ms: 5 }),
    ]);
  });
  after(async () => {
    await t.close();
  });

  test("admins: every company deployment of every member, each and summed, over 7, 30 or 90 days", async () => {
    const res = await get(org.admins[0], "/v1/org/stats/sites");
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.days, 7);
    assert.equal(body.daily.length, 7);
    assert.equal(body.to, day(0));
    assert.deepEqual(body.sites.map((s: { slug: string }) => s.slug).sort(), [a.slug, b.slug].sort());
    const sa = body.sites.find((s: { id: string }) => s.id === a.id);
    assert.equal(sa.kind, "site");
    assert.equal(sa.responsible_account_id, org.members[0].id);
    assert.equal(sa.totals.requests, 150);
    assert.equal(sa.totals.errors_4xx, 5);
    assert.equal(sa.totals.errors_5xx, 3);
    assert.equal(sa.daily.length, 7);
    assert.equal(sa.daily[6].requests, 100);
    assert.equal(sa.daily[3].requests, 50);
    // the sum: both company sites, never the personal one nor another organization's
    assert.equal(body.totals.requests, 180);
    assert.equal(body.totals.errors_4xx, 8);
    assert.equal(body.totals.bytes_out, 150 * 1000 + 5);
    assert.equal(body.daily[6].requests, 130);
    // response times come from the merged buckets: 100 at ~20 ms, 50 at ~40 ms and 30 at ~200 ms
    assert.ok(body.totals.p50_ms >= 16 && body.totals.p50_ms <= 24, String(body.totals.p50_ms));
    assert.ok(body.totals.p95_ms >= 160 && body.totals.p95_ms <= 240, String(body.totals.p95_ms));

    const month = (await get(org.admins[0], "/v1/org/stats/sites?days=30")).json();
    assert.equal(month.daily.length, 30);
    assert.equal(month.totals.requests, 187);
    const quarter = (await get(org.owner, "/v1/org/stats/sites?days=90")).json();
    assert.equal(quarter.daily.length, 90);
    assert.equal(quarter.totals.requests, 196);
  });

  test("?days other than 7, 30 or 90 is 400; members 403 forbidden_role; outsiders 404", async () => {
    for (const bad of ["5", "31", "abc", "0", "7.5"])
      expectError(await get(org.admins[0], `/v1/org/stats/sites?days=${bad}`), 400, "invalid_request");
    expectError(await get(org.admins[0], `/v1/org/stats/sites/${a.slug}?days=14`), 400, "invalid_request");
    expectError(await get(org.members[0], "/v1/org/stats/sites"), 403, "forbidden_role");
    expectError(await get(org.outsider, "/v1/org/stats/sites"), 404, "not_found");
  });

  test("one company deployment by slug or id; personal, foreign and unknown slugs are 404", async () => {
    const res = await get(org.members[0], `/v1/org/stats/sites/${b.slug}?days=30`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.slug, b.slug);
    assert.equal(body.responsible_account_id, org.admins[0].id);
    assert.equal(body.days, 30);
    assert.equal(body.totals.requests, 30);
    assert.equal(body.daily[29].errors_4xx, 3);
    const byId = (await get(org.owner, `/v1/org/stats/sites/${a.id}`)).json();
    assert.equal(byId.totals.requests, 150);
    for (const slug of [personal.slug, foreign.slug, "no-such-site"])
      expectError(await get(org.admins[0], `/v1/org/stats/sites/${slug}`), 404, "not_found");
    expectError(await get(org.outsider, `/v1/org/stats/sites/${a.slug}`), 404, "not_found");
  });

  test("an organization without company deployments answers zeros", async () => {
    const empty = await makeOrg(t, { admins: 0, members: 0 });
    const body = (await get(empty.owner, "/v1/org/stats/sites?days=7")).json();
    assert.deepEqual(body.sites, []);
    assert.equal(body.totals.requests, 0);
    assert.equal(body.totals.p50_ms, null);
    assert.equal(body.daily.length, 7);
  });
});
