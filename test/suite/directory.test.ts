/**
 * The suite's directory part (src/suite/README.md, "Directory"): departments mirror the linked company's chart
 * through the fake NAVER WORKS-style directory, matched on the unit id; renames and moves update, removed units are
 * tombstoned (what points at them keeps working), pages are followed, the suite's 429 is waited out, the periodic
 * sweep reconciles, and the route answers by role.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, scopedKey, type TestApp } from "../helpers/app.js";
import { makeOrg } from "../orgs/lib.js";
import { insidePolicy, unitsWithDescendants } from "../../src/suite/directory/public.js";
import { parentsFirst } from "../../src/suite/directory/plan.js";
import { SWEEP_JOB } from "../../src/suite/directory/module.js";
import { requestDepartmentSync } from "../../src/suite/directory/public.js";
import { suiteApiClient } from "../../src/suite/adapter/api-client.js";
import { worksDirectory } from "../../src/suite/adapter/directory.js";
import { directoryApp, directoryJob, linkedOrg, resultsOf, staff, syncNow } from "./directory-lib.js";

let t: TestApp;
let fake: Awaited<ReturnType<typeof directoryApp>>["fake"];
let close: () => Promise<void>;
before(async () => {
  ({ t, fake, close } = await directoryApp());
});
after(async () => close?.());

const departments = async (token: string) => {
  const res = await call(t.app, { url: "/v1/org/departments", token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().items as { id: string; code: string; name: string; parent_code: string | null }[];
};
const memberDepartment = async (token: string, id: string) => {
  const res = await call(t.app, { url: "/v1/org/members", token });
  return res.json().items.find((m: { id: string }) => m.id === id)?.department_code ?? null;
};

describe("the join policy's rule", () => {
  const chart = [
    { id: "hq", name: "HQ", parentId: null },
    { id: "eng", name: "Eng", parentId: "hq" },
    { id: "web", name: "Web", parentId: "eng" },
    { id: "sales", name: "Sales", parentId: "hq" },
  ];
  test("departments: chosen units and their descendants; all; invite", () => {
    assert.deepEqual([...unitsWithDescendants(chart, ["eng"])].sort(), ["eng", "web"]);
    const departmentsPolicy = { joinPolicy: "departments" as const, joinUnits: ["eng"] };
    assert.deepEqual(insidePolicy(departmentsPolicy, chart, ["sales", "web"], { invited: false }), { inside: true });
    assert.deepEqual(insidePolicy(departmentsPolicy, chart, ["sales"], { invited: true }), {
      inside: false,
      notice: "suite_join_department",
    });
    assert.deepEqual(insidePolicy({ joinPolicy: "all", joinUnits: [] }, chart, [], { invited: false }), {
      inside: true,
    });
    const invite = { joinPolicy: "invite" as const, joinUnits: [] };
    assert.deepEqual(insidePolicy(invite, chart, ["hq"], { invited: false }), {
      inside: false,
      notice: "suite_join_invite",
    });
    assert.deepEqual(insidePolicy(invite, chart, ["hq"], { invited: true }), { inside: true });
  });

  test("parents first; an unknown parent or a cycle makes a root", () => {
    const order = parentsFirst([
      { id: "c", name: "C", parentId: "b" },
      { id: "b", name: "B", parentId: "a" },
      { id: "a", name: "A", parentId: null },
      { id: "x", name: "X", parentId: "missing" },
      { id: "p", name: "P", parentId: "q" },
      { id: "q", name: "Q", parentId: "p" },
    ]);
    const ids = order.map((o) => o.unit.id);
    assert.ok(ids.indexOf("a") < ids.indexOf("b") && ids.indexOf("b") < ids.indexOf("c"), ids.join());
    assert.equal(order.find((o) => o.unit.id === "x")!.parentId, null);
    assert.equal(order.filter((o) => o.parentId === null).length, 3);
  });
});

describe("department mirroring", () => {
  test("insert, rename and move, skip, tombstone and come back; members follow their primary unit", async () => {
    const org = await linkedOrg(t, fake);
    const alice = await staff(t, org, "alice");
    org.directory.units = [
      { id: "u-web", name: "Web", parentId: "u-eng" }, // a child before its parent: written parents first
      { id: "u-eng", name: "Engineering", parentId: "u-hq" },
      { id: "u-hq", name: "HQ" },
      { id: "u-ops", name: "Ops", parentId: "u-hq" },
    ];
    org.directory.users = [
      { userId: "owner", email: org.owner.email, units: ["u-hq"] },
      { userId: "alice", email: alice.email, units: ["u-web", "u-hq"] },
    ];

    const first = await syncNow(t, org.owner.token);
    assert.deepEqual(resultsOf(first), { "u-web": "insert", "u-eng": "insert", "u-hq": "insert", "u-ops": "insert" });
    assert.deepEqual(first.counts, { insert: 4, update: 0, skip: 0, delete: 0 });
    const chart = Object.fromEntries((await departments(org.owner.token)).map((d) => [d.code, d]));
    assert.equal(chart["u-web"].name, "Web");
    assert.equal(chart["u-web"].parent_code, "u-eng");
    assert.equal(chart["u-eng"].parent_code, "u-hq");
    assert.equal(chart["u-hq"].parent_code, null);
    assert.equal(await memberDepartment(org.owner.token, alice.id), "u-web");
    assert.equal(first.members.find((m: { email: string }) => m.email === alice.email).result, "update");

    // a rename and a move: matched on the unit id, so the same departments are updated
    org.directory.units[0] = { id: "u-web", name: "Frontend", parentId: "u-hq" };
    org.directory.units[1] = { id: "u-eng", name: "Platform Engineering", parentId: "u-hq" };
    const second = await syncNow(t, org.admins[0].token);
    assert.deepEqual(resultsOf(second), { "u-web": "update", "u-eng": "update", "u-hq": "skip", "u-ops": "skip" });
    const after = Object.fromEntries((await departments(org.owner.token)).map((d) => [d.code, d]));
    assert.equal(after["u-web"].id, chart["u-web"].id);
    assert.equal(after["u-web"].name, "Frontend");
    assert.equal(after["u-web"].parent_code, "u-hq");
    assert.equal(after["u-eng"].name, "Platform Engineering");

    // the same chart again: nothing to do
    const third = await syncNow(t, org.owner.token);
    assert.deepEqual(third.counts, { insert: 0, update: 0, skip: 4, delete: 0 });
    assert.deepEqual(third.member_counts, { update: 0, skip: 2, delete: 0 });

    // a password member and a budget point at Ops; the suite removes Ops: tombstoned, not deleted
    const bob = org.members[0];
    let res = await call(t.app, {
      method: "PATCH",
      url: `/v1/org/members/${bob.id}`,
      token: org.owner.token,
      body: { department_code: "u-ops" },
    });
    assert.equal(res.statusCode, 200, res.body);
    res = await call(t.app, {
      method: "PUT",
      url: "/v1/org/budgets",
      token: org.owner.token,
      body: { scope: "department", department_code: "u-ops", amount_krw: 50_000, mode: "warn" },
    });
    assert.equal(res.statusCode, 201, res.body);
    org.directory.units = org.directory.units.filter((u) => u.id !== "u-ops");
    const removed = await syncNow(t, org.owner.token);
    assert.equal(resultsOf(removed)["u-ops"], "delete");
    assert.deepEqual(removed.counts, { insert: 0, update: 0, skip: 3, delete: 1 });
    assert.ok(!(await departments(org.owner.token)).some((d) => d.code === "u-ops"), "gone from the list");
    const { rows } = await t.db.query("SELECT removed_at FROM org_departments WHERE id = $1", [chart["u-ops"].id]);
    assert.ok(rows[0]?.removed_at, "the row stays, tombstoned");
    assert.equal(await memberDepartment(org.owner.token, bob.id), "u-ops", "the member still points at it");
    res = await call(t.app, { url: "/v1/org", token: bob.token });
    assert.equal(res.statusCode, 200, res.body);
    res = await call(t.app, { url: "/v1/org/budgets", token: org.owner.token });
    assert.ok(
      res.json().items.some((b: { department_code: string }) => b.department_code === "u-ops"),
      "the budget still applies",
    );
    // a picker no longer offers it
    res = await call(t.app, {
      method: "PUT",
      url: "/v1/org/budgets",
      token: org.owner.token,
      body: { scope: "department", department_code: "u-ops", amount_krw: 60_000, mode: "warn" },
    });
    expectError(res, 400, "unknown_department");
    // the HR sync may reuse the code of a tombstoned department (codes are unique among live ones)
    res = await call(t.app, {
      method: "PUT",
      url: "/v1/org/departments/u-ops",
      token: org.owner.token,
      body: { name: "Ops (HR)" },
    });
    assert.equal(res.statusCode, 201, res.body);
    res = await call(t.app, { method: "DELETE", url: "/v1/org/departments/u-ops", token: org.owner.token });
    assert.equal(res.statusCode, 200, res.body);

    // listed again: the same department comes back
    org.directory.units.push({ id: "u-ops", name: "Ops", parentId: "u-hq" });
    const back = await syncNow(t, org.owner.token);
    assert.equal(resultsOf(back)["u-ops"], "update");
    assert.equal((await departments(org.owner.token)).find((d) => d.code === "u-ops")?.id, chart["u-ops"].id);
  });

  test("every page is read (three pages of units, two of users)", async () => {
    const org = await linkedOrg(t, fake);
    org.directory.units = Array.from({ length: 230 }, (_, i) => ({
      id: `p-${String(i).padStart(3, "0")}`,
      name: `Unit ${i}`,
      parentId: i === 0 ? null : "p-000",
    }));
    org.directory.users = [
      { userId: "owner", email: org.owner.email, units: ["p-000"] },
      ...Array.from({ length: 120 }, (_, i) => ({ userId: `x-${i}`, email: `x${i}@suite.test`, units: ["p-001"] })),
    ];
    const before = { ...fake.directory.calls };
    const answer = await syncNow(t, org.owner.token);
    assert.equal(answer.counts.insert, 230);
    assert.equal(fake.directory.calls.orgunits - before.orgunits, 3);
    assert.equal(fake.directory.calls.users - before.users, 2);
    assert.equal((await departments(org.owner.token)).length, 230);
  });

  test("the suite's 429 is waited out (Retry-After)", async () => {
    const org = await linkedOrg(t, fake);
    org.directory.units = [{ id: "r-1", name: "One" }];
    org.directory.users = [{ userId: "owner", email: org.owner.email, units: ["r-1"] }];
    fake.directory.setRateLimit({ rps: 2, retryAfterSeconds: 1 });
    try {
      const limited = fake.directory.calls.limited;
      const answer = await syncNow(t, org.owner.token);
      assert.deepEqual(answer.counts, { insert: 1, update: 0, skip: 0, delete: 0 });
      assert.ok(fake.directory.calls.limited > limited, "the fake answered 429 at least once");
    } finally {
      fake.directory.setRateLimit(null);
    }
  });

  test("the suite not answering is 503 suite_unavailable, and nothing changes", async () => {
    const org = await linkedOrg(t, fake);
    await t.db.query("UPDATE suite_links SET company_id = 'unknown-to-the-suite' WHERE org_id = $1", [org.id]);
    const res = await call(t.app, { method: "POST", url: "/v1/org/suite/sync-departments", token: org.owner.token });
    expectError(res, 503, "suite_unavailable");
    assert.equal((await departments(org.owner.token)).length, 0);
  });

  test("the periodic sweep reconciles due organizations and runs syncs a login asked for", async () => {
    const org = await linkedOrg(t, fake);
    org.directory.units = [{ id: "s-1", name: "Sweep" }];
    org.directory.users = [{ userId: "owner", email: org.owner.email, units: ["s-1"] }];
    const sweep = directoryJob(t, SWEEP_JOB);
    await sweep.handler({}, { id: "test", retryCount: 0 });
    assert.equal((await departments(org.owner.token)).find((d) => d.code === "s-1")?.name, "Sweep");

    // synced just now: not due again until SUITE_SYNC_MINUTES passed, unless a login asks
    org.directory.units[0].name = "Swept";
    await sweep.handler({}, { id: "test", retryCount: 0 });
    assert.equal((await departments(org.owner.token)).find((d) => d.code === "s-1")?.name, "Sweep");
    // asked for just now: that is the sync job's (the queue is off in tests); the sweep runs it once it is a
    // minute old, as it does for a job lost to a crash
    await requestDepartmentSync(t.platform, t.db, org.id);
    await sweep.handler({}, { id: "test", retryCount: 0 });
    assert.equal((await departments(org.owner.token)).find((d) => d.code === "s-1")?.name, "Sweep");
    await t.db.query(
      `UPDATE suite_directory_syncs SET requested_at = requested_at - interval '61 seconds',
              synced_at = synced_at - interval '61 seconds' WHERE org_id = $1`,
      [org.id],
    );
    await sweep.handler({}, { id: "test", retryCount: 0 });
    assert.equal((await departments(org.owner.token)).find((d) => d.code === "s-1")?.name, "Swept");

    org.directory.units[0].name = "Hourly";
    await t.db.query("UPDATE suite_directory_syncs SET synced_at = now() - interval '2 hours' WHERE org_id = $1", [
      org.id,
    ]);
    await sweep.handler({}, { id: "test", retryCount: 0 });
    assert.equal((await departments(org.owner.token)).find((d) => d.code === "s-1")?.name, "Hourly");
  });
});

describe("the adapter", () => {
  test("one member by id, units primary first; null when the suite does not list them", async () => {
    const company = fake.directory.company(`adapter-${process.pid}`);
    company.users = [{ userId: "zoe", email: "zoe@suite.test", lastName: "Kim", firstName: "Zoe", units: ["b", "a"] }];
    const api = suiteApiClient({ baseUrl: fake.url, token: fake.token, rps: 1000 });
    const directory = worksDirectory(api);
    assert.deepEqual(await directory.member(`adapter-${process.pid}`, "zoe"), {
      userId: "zoe",
      email: "zoe@suite.test",
      name: "Kim Zoe",
      unitIds: ["b", "a"],
    });
    assert.equal(await directory.member(`adapter-${process.pid}`, "nobody"), null);
  });
});

describe("POST /v1/org/suite/sync-departments by role", () => {
  test("owner and admin sync; a member 403; an outsider 404; a read-only key 403; an unlinked organization 404", async () => {
    const org = await linkedOrg(t, fake);
    org.directory.units = [{ id: "m-1", name: "One" }];
    await syncNow(t, org.owner.token);
    await syncNow(t, org.admins[0].token);
    const send = (token: string) => call(t.app, { method: "POST", url: "/v1/org/suite/sync-departments", token });
    expectError(await send(org.members[0].token), 403, "forbidden_role");
    expectError(await send(org.outsider.token), 404, "not_found");
    expectError(await send(await scopedKey(t.app, org.owner.token, ["org:read"])), 403, "scope_insufficient");
    const plain = await makeOrg(t);
    expectError(await send(plain.owner.token), 404, "not_found");
  });
});
