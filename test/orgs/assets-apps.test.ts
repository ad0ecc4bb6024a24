/**
 * Company assets of apps and databases on real containers and a real PostgreSQL server (src/orgs/README.md,
 * "Company assets"): designating a database carries the pod attached to it and the pod's volume along (ties), its
 * backups follow, the running container is left alone; a volume name the organization already uses is a 409 and
 * nothing moves; an admin gives the pod back with its database and volume, unless another member is responsible
 * for one of them (409).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { containersOf, createAppsTestApp, createPod, waitPod } from "../apps/lib.js";
import { createRunning, eventually, fund } from "../databases/lib.js";
import { makeOrg, ORG, type Person, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;
let member: Person;
let image: string;

before(async () => {
  t = await createAppsTestApp();
  org = await makeOrg(t, { admins: 1, members: 1 });
  member = org.members[0];
  for (const p of [member, org.admins[0]]) await fund(t, p.id);
  image = await testImage("TEST_IMAGE_HTTPD_V1");
});
after(async () => t?.close());

const req = (method: "GET" | "POST" | "DELETE", url: string, who: Person, body?: unknown, headers = {}) =>
  call(t.app, { method, url, token: who.token, body, headers });
const ids = (list: { id: string }[]) => list.map((i) => i.id).sort();

async function readyVolume(who: Person, name: string) {
  const res = await req("POST", "/v1/volumes", who, { name, size_gb: 1 });
  assert.equal(res.statusCode, 201, res.body);
  return eventually(
    async () => (await req("GET", `/v1/volumes/${res.json().id}`, who)).json(),
    (v) => v.state === "ready",
    60_000,
  );
}

describe("company assets of apps and databases", () => {
  let db: any;
  let volume: any;
  let pod: any;
  let containers: string[];

  test("designating a database moves the pod attached to it and the pod's volume; backups follow; the container stays", async () => {
    db = await createRunning(t, member.token, { name: `assets-db-${process.pid % 10000}` });
    const backup = await req("POST", `/v1/databases/${db.id}/backup`, member, { label: "before" });
    assert.equal(backup.statusCode, 202, backup.body);
    await eventually(
      async () => (await req("GET", "/v1/backups", member)).json() as { database_id: string; status: string }[],
      (list) => list.some((b) => b.database_id === db.id),
      60_000,
    );
    volume = await readyVolume(member, "data");
    pod = await createPod(t, member.token, {
      name: "assets-web",
      image,
      port: 8080,
      volumes: [{ volume: "data", path: "/data" }],
      databases: [db.slug],
    });
    await waitPod(t, member.token, pod.id, (p) => p.state === "running");
    containers = (await containersOf(pod.id)).map((c) => c.Id);

    const res = await req("POST", "/v1/org/assets", member, { kind: "database", id: db.slug });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().id, db.id);
    assert.deepEqual(
      res
        .json()
        .moved_with.map((m: { kind: string; id: string }) => `${m.kind}:${m.id}`)
        .sort(),
      [`pod:${pod.id}`, `volume:${volume.id}`].sort(),
    );

    // the organization's context sees all three and the backups; the personal one none of them
    expectError(await req("GET", `/v1/databases/${db.id}`, member), 404, "not_found");
    assert.equal((await req("GET", `/v1/databases/${db.slug}`, org.admins[0], undefined, ORG)).statusCode, 200);
    assert.ok(ids((await req("GET", "/v1/databases", member, undefined, ORG)).json()).includes(db.id));
    assert.ok(!ids((await req("GET", "/v1/databases", member)).json()).includes(db.id));
    const backups = (await req("GET", "/v1/backups", member, undefined, ORG)).json() as { database_id: string }[];
    assert.ok(
      backups.some((b) => b.database_id === db.id),
      "the backups moved with the database",
    );
    assert.equal((await req("GET", "/v1/backups", member)).json().length, 0);
    expectError(await req("GET", `/v1/pods/${pod.id}`, member), 404, "not_found");
    const moved = await req("GET", `/v1/pods/${pod.id}`, member, undefined, ORG);
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().state, "running");
    assert.deepEqual(ids((await req("GET", "/v1/volumes", member, undefined, ORG)).json()), [volume.id]);
    // only rows changed: the same container serves
    assert.deepEqual(
      (await containersOf(pod.id)).map((c) => c.Id),
      containers,
    );
    const mine = (await call(t.app, { url: "/v1/org/assets", token: member.token })).json().items;
    assert.deepEqual(mine.map((a: { kind: string }) => a.kind).sort(), ["database", "pod", "volume"]);
  });

  test("a volume name the organization already uses: 409 conflict, nothing moved", async () => {
    // the admin's own, designated: the organization has a "spare" now
    const theirs = await readyVolume(org.admins[0], "spare");
    const first = await req("POST", "/v1/org/assets", org.admins[0], { kind: "volume", id: theirs.id });
    assert.equal(first.statusCode, 201, first.body);
    const mine = await readyVolume(member, "spare");
    const res = await req("POST", "/v1/org/assets", member, { kind: "disk", id: mine.id });
    expectError(res, 409, "conflict");
    assert.match(res.json().error.message, /spare/);
    assert.deepEqual(ids((await req("GET", "/v1/volumes", member)).json()), [mine.id]);
    assert.deepEqual(
      ids((await req("GET", "/v1/volumes", member, undefined, ORG)).json()),
      [volume.id, theirs.id].sort(),
    );
  });

  test("an admin gives the pod back with its database and volume; a tie to another member's asset is a 409", async () => {
    const path = `/v1/org/assets/pod/${pod.id}`;
    // as if the admin were responsible for the database: the pod cannot leave without it
    await t.db.query("UPDATE databases SET account_id = $2 WHERE id = $1", [db.id, org.admins[0].id]);
    const refused = await req("DELETE", path, org.admins[0]);
    expectError(refused, 409, "conflict");
    assert.match(refused.json().error.message, /database/);
    assert.equal((await req("GET", `/v1/pods/${pod.id}`, member, undefined, ORG)).statusCode, 200, "nothing moved");
    await t.db.query("UPDATE databases SET account_id = $2 WHERE id = $1", [db.id, member.id]);

    const res = await req("DELETE", path, org.admins[0]);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().creator, { id: member.id, email: member.email });
    assert.deepEqual(
      res
        .json()
        .moved_with.map((m: { kind: string }) => m.kind)
        .sort(),
      ["database", "volume"],
    );
    assert.equal((await req("GET", `/v1/pods/${pod.id}`, member)).statusCode, 200);
    assert.equal((await req("GET", `/v1/databases/${db.id}`, member)).statusCode, 200);
    assert.ok(ids((await req("GET", "/v1/volumes", member)).json()).includes(volume.id));
    assert.deepEqual(
      (await containersOf(pod.id)).map((c) => c.Id),
      containers,
    );
  });
  test("a pod group is one asset: designated with its member pods, the edge's route names the new owner", async () => {
    const res = await req("POST", "/v1/pod-groups", member, {
      name: "assets-group",
      image,
      port: 8080,
      replica_min: 1,
      replica_max: 1,
    });
    assert.equal(res.statusCode, 201, res.body);
    const group = res.json();
    const memberPod = group.replicas[0].id as string;
    await waitPod(t, member.token, memberPod, (p) => p.state === "running");
    expectError(await req("POST", "/v1/org/assets", member, { kind: "pod", id: memberPod }), 404, "not_found");

    const moved = await req("POST", "/v1/org/assets", member, { kind: "group", id: group.slug });
    assert.equal(moved.statusCode, 201, moved.body);
    assert.equal(moved.json().kind, "pod-group");
    assert.equal(moved.json().state, "running");
    assert.equal((await req("GET", `/v1/pod-groups/${group.slug}`, member, undefined, ORG)).statusCode, 200);
    assert.equal((await req("GET", `/v1/pods/${memberPod}`, member, undefined, ORG)).statusCode, 200);
    expectError(await req("GET", `/v1/pods/${memberPod}`, member), 404, "not_found");
    const listed = (await req("GET", "/v1/org/resources?kind=pod", member)).json().items as { id: string }[];
    assert.ok(!listed.some((a) => a.id === memberPod), "members are not listed apart from their group");
    const source = t.platform.kernel.all("edgeRoutes").find((r) => r.channel === "pod_routes")!;
    assert.deepEqual((await source.resolve(t.db, group.slug))?.owner, { kind: "org", id: org.id });
  });
});
