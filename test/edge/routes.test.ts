/**
 * Routes follow the store: cached per host, dropped by a NOTIFY on the source's channel within a second in every
 * edge process over the store; a replica that stops mid-traffic costs no GET (retried on the other one).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { APPS_DOMAIN, edgeApp, request, upstream, within, type EdgeApp, type Upstream } from "./lib.js";

let e: EdgeApp;
let second: EdgeApp;
const ups: Upstream[] = [];

before(async () => {
  e = await edgeApp();
  // a second edge process over the same store: another platform, same database, a route source of its own
  second = await edgeApp({ databaseUrl: e.t.url });
  for (const name of ["a", "b", "c", "d"]) ups.push(await upstream(name));
});

after(async () => {
  await second?.close();
  await e?.close();
  for (const u of ups) await u.close();
});

const nameAt = async (app: EdgeApp, label: string) => {
  const r = await request(app.port, `${label}.${APPS_DOMAIN}`);
  return r.status === 200 ? (r.json().name as string) : String(r.status);
};

test("a resolved route is cached: the source is asked once per host, not per request", async () => {
  e.source.set("cached", [ups[0].address]);
  const calls = e.source.calls;
  for (let i = 0; i < 20; i++) assert.equal(await nameAt(e, "cached"), "a");
  assert.equal(e.source.calls - calls, 1);
  // unknown hosts are cached too (negative cache)
  const before = e.source.calls;
  for (let i = 0; i < 5; i++) assert.equal(await nameAt(e, "nobody"), "404");
  assert.equal(e.source.calls - before, 1);
});

test("a NOTIFY on the source's channel moves every edge process to the new answer within a second", async () => {
  for (const app of [e, second]) app.source.set("moving", [ups[0].address]);
  assert.equal(await nameAt(e, "moving"), "a");
  assert.equal(await nameAt(second, "moving"), "a");
  // the store changes (each process's fake source reads "the store": both change), nothing announced yet:
  // both keep serving what they cached
  for (const app of [e, second]) app.source.set("moving", [ups[1].address]);
  assert.equal(await nameAt(e, "moving"), "a");
  assert.equal(await nameAt(second, "moving"), "a");
  // one NOTIFY, sent from the first process's side (a trigger fires wherever the change commits)
  const sent = Date.now();
  await e.notify("moving");
  const took = await Promise.all(
    [e, second].map((app) => within("edge to follow", 1000, async () => (await nameAt(app, "moving")) === "b")),
  );
  assert.ok(Date.now() - sent < 1000, `followed after ${took.join(", ")} ms`);
});

test("a new app behind a cached 404 appears on its NOTIFY; a removed one disappears", async () => {
  assert.equal(await nameAt(second, "newcomer"), "404");
  second.source.set("newcomer", [ups[2].address]);
  await second.notify("newcomer");
  await within("new app to appear", 1000, async () => (await nameAt(second, "newcomer")) === "c");
  second.source.answers.delete("newcomer");
  await second.notify("");
  await within("removed app to go", 1000, async () => (await nameAt(second, "newcomer")) === "404");
});

test("a route expires after EDGE_ROUTE_TTL_MS even when no NOTIFY comes", async () => {
  const quick = await edgeApp({ databaseUrl: e.t.url, env: { EDGE_ROUTE_TTL_MS: "200", EDGE_NEGATIVE_TTL_MS: "200" } });
  try {
    quick.source.set("ttl", [ups[0].address]);
    assert.equal(await nameAt(quick, "ttl"), "a");
    quick.source.set("ttl", [ups[3].address]);
    await within("route to expire", 1500, async () => (await nameAt(quick, "ttl")) === "d");
  } finally {
    await quick.close();
  }
});

test("a replica closed mid-traffic: no GET fails (retried on the other replica)", async () => {
  const doomed = await upstream("doomed");
  const survivor = ups[3];
  e.source.set("rolling", [doomed.address, survivor.address]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const results = { ok: 0, failed: [] as string[], byName: new Map<string, number>() };
  let closed = false;
  const worker = async () => {
    for (let i = 0; i < 150; i++) {
      try {
        const r = await request(e.port, `rolling.${APPS_DOMAIN}`, { agent, path: `/${i}` });
        if (r.status !== 200) results.failed.push(`${r.status}`);
        else {
          results.ok++;
          const name = r.json().name;
          results.byName.set(name, (results.byName.get(name) ?? 0) + 1);
        }
      } catch (err) {
        results.failed.push((err as Error).message);
      }
      // halfway through, the replica goes away at once: open connections cut, nothing listening on its port
      if (!closed && results.ok > 300) {
        closed = true;
        await doomed.close();
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  agent.destroy();
  assert.ok(closed);
  assert.deepEqual(results.failed, []);
  assert.equal(results.ok, 900);
  assert.ok((results.byName.get("doomed") ?? 0) > 100, JSON.stringify([...results.byName]));
});
