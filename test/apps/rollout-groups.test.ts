/**
 * Issue 29, pod groups: a spec change rolls the members one batch at a time (max_surge 1: never two members
 * rolling at once), and a member's failing new release stops the group's rollout and takes the group back.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, type TestApp } from "../helpers/app.js";
import { httpGet } from "./lib.js";
import { command, setup, teardown } from "./checks-lib.js";

let t: TestApp;
let token: string;
let image: string;

before(async () => {
  const s = await setup("apps.rollout-groups.test");
  ({ t, image } = s);
  token = s.user.token;
});
after(async () => {
  for (const g of (await call(t.app, { url: "/v1/pod-groups", token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pod-groups/${g.id}`, token });
  await teardown(t, token);
});

const group = async (id: string) => (await call(t.app, { url: `/v1/pod-groups/${id}`, token })).json();
const pods = async (g: any) =>
  Promise.all(g.replicas.map(async (r: any) => (await call(t.app, { url: `/v1/pods/${r.id}`, token })).json()));
const serving = (p: any) => p.state === "running" && p.serving_generation === p.generation;

async function waitGroup(id: string, until: (g: any, members: any[]) => boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  let maxRolling = 0;
  for (;;) {
    const g = await group(id);
    const members = await pods(g);
    maxRolling = Math.max(maxRolling, members.filter((m) => !serving(m)).length);
    if (until(g, members)) return { g, members, maxRolling };
    assert.ok(Date.now() < deadline, `group did not get there: ${JSON.stringify(g)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("a group rolls one member at a time, and a failing release takes the whole group back", async () => {
  const readiness = { type: "http", path: "/cgi-bin/health", interval_seconds: 0.5 };
  const created = await call(t.app, {
    method: "POST",
    url: "/v1/pod-groups",
    token,
    body: {
      name: "batches",
      image,
      port: 8080,
      command: command({ body: "v1" }),
      checks: { readiness },
      deploy: { max_surge: 1, deadline_seconds: 4, stop_grace_seconds: 1 },
      replica_min: 2,
      replica_max: 2,
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  await waitGroup(id, (g, ms) => ms.length === 2 && ms.every(serving));

  const good = await call(t.app, {
    method: "PATCH",
    url: `/v1/pod-groups/${id}`,
    token,
    body: { command: command({ body: "v2" }) },
  });
  assert.equal(good.statusCode, 200, good.body);
  const rolled = await waitGroup(id, (g, ms) => g.rollout?.state === "done" && ms.every(serving));
  assert.equal(rolled.maxRolling, 1, "one member at a time");
  for (const m of rolled.members) {
    assert.equal(m.release, 2);
    assert.equal((await httpGet(`http://${m.address}/`)).body, "v2\n");
  }

  const bad = await call(t.app, {
    method: "PATCH",
    url: `/v1/pod-groups/${id}`,
    token,
    body: { command: command({ body: "v3", health: 500 }) },
  });
  assert.equal(bad.statusCode, 200, bad.body);
  const back = await waitGroup(id, (g, ms) => g.rollout?.state === "rolled_back" && ms.every(serving));
  assert.match(back.g.rollout.reason, /^member .*not ready within 4 s: GET \/cgi-bin\/health answered 500/);
  assert.match(back.g.command.join(" "), /echo v2/, "the group's spec is the one before");
  for (const m of back.members) assert.equal((await httpGet(`http://${m.address}/`)).body, "v2\n");
  // only the first batch tried release 3; the other member never left release 2
  assert.deepEqual(back.members.map((m: any) => m.release).sort(), [2, 2]);

  // the group's releases: 3 rolled back, 2 serves again; then back to release 1 as release 4, a batch at a time
  const releases = async () => (await call(t.app, { url: `/v1/pod-groups/${id}/releases`, token })).json();
  assert.deepEqual(
    (await releases()).map((r: any) => [r.number, r.outcome, r.changed]),
    [
      [3, "rolled_back", ["command"]],
      [2, "serving", ["command"]],
      [1, "superseded", []],
    ],
  );
  assert.equal(back.g.release, 2);
  const rb = await call(t.app, { method: "POST", url: `/v1/pod-groups/${id}/rollback`, token, body: { release: 1 } });
  assert.equal(rb.statusCode, 202, rb.body);
  assert.equal(rb.json().release, 4);
  const one = await waitGroup(id, (g, ms) => g.rollout?.state === "done" && ms.every(serving));
  for (const m of one.members) assert.equal((await httpGet(`http://${m.address}/`)).body, "v1\n");
  const after4 = await releases();
  assert.deepEqual(
    after4.slice(0, 2).map((r: any) => [r.number, r.outcome, r.description]),
    [
      [4, "serving", "rollback to release 1"],
      [3, "rolled_back", "changed command"],
    ],
  );
  assert.equal(after4[1].outcome_reason, back.g.rollout.reason);
  // nothing left to go back to at the current release
  const same = await call(t.app, { method: "POST", url: `/v1/pod-groups/${id}/rollback`, token, body: { release: 4 } });
  assert.equal(same.statusCode, 409, same.body);
});
