/**
 * Deprovisioning at a directory sync (src/suite/README.md, "Directory"): staff the suite no longer lists, or who
 * moved out of the join policy, lose every session and token, leave the organization, get deprovisioned_at, and
 * their pending invitations are withdrawn; the owner is never removed, only reported.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { call, scopedKey, type TestApp } from "../helpers/app.js";
import type { Person } from "../orgs/lib.js";
import { requestDepartmentSync } from "../../src/suite/directory/public.js";
import type { DirectoryService } from "../../src/suite/directory/service.js";
import { directoryApp, linkedOrg, staff, syncNow, type LinkedOrg } from "./directory-lib.js";

let t: TestApp;
let fake: Awaited<ReturnType<typeof directoryApp>>["fake"];
let close: () => Promise<void>;
before(async () => {
  ({ t, fake, close } = await directoryApp({ startJobs: true }));
});
after(async () => close?.());

const CHART = [
  { id: "hq", name: "HQ" },
  { id: "eng", name: "Engineering", parentId: "hq" },
  { id: "web", name: "Web", parentId: "eng" },
  { id: "sales", name: "Sales", parentId: "hq" },
];

const me = async (token: string) => (await call(t.app, { url: "/v1/me", token })).statusCode;
const memberIds = async (org: LinkedOrg) =>
  (await call(t.app, { url: "/v1/org/members", token: org.owner.token })).json().items.map((m: { id: string }) => m.id);
const deprovisionedAt = async (who: Person) =>
  (await t.db.query("SELECT deprovisioned_at FROM suite_identities WHERE account_id = $1", [who.id])).rows[0]
    ?.deprovisioned_at ?? null;
const memberItem = (answer: { members: { account_id: string }[] }, who: Person) =>
  answer.members.find((m) => m.account_id === who.id) as
    { result: string; reason?: string; message?: string; department_code: string | null } | undefined;

/** A pending invitation to the person's e-mail, as one sent before they joined would be. */
async function pendingInvite(org: LinkedOrg, who: Person): Promise<string> {
  const id = randomUUID();
  await t.db.query(
    `INSERT INTO org_invites (id, org_id, email, role, token_hash, invited_by, expires_at)
     VALUES ($1, $2, $3, 'member', $4, $5, now() + interval '7 days')`,
    [id, org.id, who.email, randomBytes(32), org.owner.id],
  );
  return id;
}

describe("syncs asked for by logins", () => {
  test("a burst of logins queues one sync job per organization, which runs the sync", async () => {
    const org = await linkedOrg(t, fake);
    org.directory.units = [{ id: "burst", name: "Burst" }];
    org.directory.users = [{ userId: "owner", email: org.owner.email, units: ["burst"] }];
    // synced a moment ago, so only the logins' requests make it due (the periodic sweep leaves those to the job)
    await t.db.query("INSERT INTO suite_directory_syncs (org_id, synced_at) VALUES ($1, now())", [org.id]);
    const before = fake.directory.calls.orgunits;
    // the suite answers once the whole burst is asked: a sync that started meanwhile cannot end before the burst does
    const release = fake.directory.hold();
    await Promise.all(Array.from({ length: 8 }, () => requestDepartmentSync(t.platform, t.db, org.id)));
    release();
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await t.db.query(
        "SELECT synced_at >= requested_at AS done FROM suite_directory_syncs WHERE org_id = $1",
        [org.id],
      );
      if (rows[0]?.done) break;
      assert.ok(Date.now() < deadline, "the sync job ran");
      await new Promise((r) => setTimeout(r, 100));
    }
    const { rows } = await t.db.query("SELECT suite_unit_id FROM org_departments WHERE org_id = $1", [org.id]);
    assert.deepEqual(rows, [{ suite_unit_id: "burst" }]);
    // one job running and at most one queued behind it: never one per login
    assert.ok(fake.directory.calls.orgunits - before <= 2, `${fake.directory.calls.orgunits - before} syncs`);
    // a job still queued behind the sync that covered its request reads nothing; a request after it is synced
    const directory = t.platform.state<{ service: DirectoryService }>("suite-directory").service;
    const reads = fake.directory.calls.orgunits;
    await directory.syncRequested(org.id);
    assert.equal(fake.directory.calls.orgunits, reads, "the covered request is not synced again");
    await t.db.query("UPDATE suite_directory_syncs SET requested_at = now() + interval '1 second' WHERE org_id = $1", [
      org.id,
    ]);
    await directory.syncRequested(org.id);
    assert.equal(fake.directory.calls.orgunits, reads + 1, "a later request is");
  });
});

describe("deprovisioning at a sync", () => {
  test("a member the suite no longer lists loses tokens, membership and invitations; the owner unlisted is reported", async () => {
    const org = await linkedOrg(t, fake, { join_policy: "all" });
    const alice = await staff(t, org, "alice");
    const aliceKey = await scopedKey(t.app, alice.token, ["pods:read"]);
    const invite = await pendingInvite(org, alice);
    org.directory.units = CHART;
    org.directory.users = [
      { userId: "owner", email: org.owner.email, units: ["hq"] },
      { userId: "alice", email: alice.email, units: ["web"] },
    ];
    let answer = await syncNow(t, org.owner.token);
    assert.equal(memberItem(answer, alice)?.department_code, "web");
    assert.equal(await me(alice.token), 200);

    // the suite drops alice, and the owner too
    org.directory.users = [];
    answer = await syncNow(t, org.admins[0].token);
    assert.deepEqual(
      { result: memberItem(answer, alice)?.result, reason: memberItem(answer, alice)?.reason },
      { result: "delete", reason: "unlisted" },
    );
    assert.equal(await me(alice.token), 401, "her session is revoked");
    assert.equal(await me(aliceKey), 401, "and her keys");
    assert.ok(await deprovisionedAt(alice));
    assert.ok(!(await memberIds(org)).includes(alice.id));
    const { rows } = await t.db.query("SELECT status FROM org_invites WHERE id = $1", [invite]);
    assert.equal(rows[0].status, "withdrawn", "an old invitation cannot bring her back");

    const owner = memberItem(answer, org.owner);
    assert.deepEqual([owner?.result, owner?.reason], ["skip", "unlisted"]);
    assert.match(owner!.message!, /owner is never deprovisioned/);
    assert.equal(await me(org.owner.token), 200);
    assert.ok((await memberIds(org)).includes(org.owner.id));
    assert.equal(await deprovisionedAt(org.owner), null);

    // a deprovisioned identity is not looked at again
    answer = await syncNow(t, org.owner.token);
    assert.equal(memberItem(answer, alice), undefined);
    assert.equal(answer.member_counts.delete, 0);
  });

  test("departments policy: staff who move out of the chosen units (and their descendants) are deprovisioned", async () => {
    const org = await linkedOrg(t, fake, { join_policy: "departments", join_units: ["eng"] });
    const bob = await staff(t, org, "bob");
    const carol = await staff(t, org, "carol");
    org.directory.units = CHART;
    org.directory.users = [
      { userId: "owner", email: org.owner.email, units: ["hq"] },
      { userId: "bob", email: bob.email, units: ["web"] },
      { userId: "carol", email: carol.email, units: ["eng"] },
    ];
    let answer = await syncNow(t, org.owner.token);
    // the owner's unit is outside the policy: reported, never removed
    assert.deepEqual(
      [memberItem(answer, org.owner)?.result, memberItem(answer, org.owner)?.reason],
      ["skip", "outside_policy"],
    );
    assert.equal(memberItem(answer, bob)?.result, "update");
    assert.equal(memberItem(answer, carol)?.result, "update");
    assert.equal(answer.member_counts.delete, 0);

    // carol moves to sales: out of the policy
    org.directory.users[2] = { userId: "carol", email: carol.email, units: ["sales"] };
    answer = await syncNow(t, org.owner.token);
    assert.deepEqual(
      [memberItem(answer, carol)?.result, memberItem(answer, carol)?.reason],
      ["delete", "outside_policy"],
    );
    assert.equal(memberItem(answer, bob)?.result, "skip");
    assert.equal(await me(carol.token), 401);
    assert.equal(await me(bob.token), 200);
    assert.ok(await deprovisionedAt(carol));
    assert.deepEqual((await memberIds(org)).includes(carol.id), false);
    assert.equal(await me(org.owner.token), 200);
  });

  test("invite policy: staff who joined stay while the suite lists them", async () => {
    const org = await linkedOrg(t, fake, { join_policy: "invite" });
    const dan = await staff(t, org, "dan");
    org.directory.units = CHART;
    org.directory.users = [
      { userId: "owner", email: org.owner.email, units: ["hq"] },
      { userId: "dan", email: dan.email, units: ["sales"] },
    ];
    const answer = await syncNow(t, org.owner.token);
    assert.equal(answer.member_counts.delete, 0);
    assert.equal(memberItem(answer, dan)?.department_code, "sales");
    assert.equal(await me(dan.token), 200);
  });
});
