/**
 * Deploy rules and department deploy blocks through HTTP: admins replace the rules (members read them, with a
 * summary for agents), every creation path in the company context is refused with 403 deploy_rule_violation
 * naming the rule (static sites, buckets, databases, pods, builds, sandboxes; none of them gets as far as a
 * container or a server), the personal context is unaffected, and a department's deploy_blocked stops its members
 * and those of its sub-departments, creations and new deployments alike.
 */
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { addMember, makeOrg, ORG, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;

const put = (token: string, body: unknown) => call(t.app, { method: "PUT", url: "/v1/org/deploy-rules", token, body });
const post = (token: string, url: string, body: Record<string, unknown>, headers: Record<string, string> = ORG) =>
  call(t.app, { method: "POST", url, token, body, headers });

function refused(res: { statusCode: number; json: () => any; body: string }, rule: RegExp) {
  expectError(res, 403, "deploy_rule_violation");
  assert.match(res.json().error.message, rule);
}

before(async () => {
  t = await createTestApp({ env: { APPS_DOMAIN: "apps.rules.test", APPS_ALLOW_LOCAL_IMAGES: "1" } });
  org = await makeOrg(t, { admins: 1, members: 1 });
});
after(async () => t?.close());

describe("deploy rules", () => {
  test("admins replace the rules; members read them with a generated summary and get 403 forbidden_role on PUT", async () => {
    const empty = await call(t.app, { url: "/v1/org/deploy-rules", token: org.members[0].token });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(empty.json().rules, {});
    assert.equal(empty.json().summary_generated, true);
    assert.match(empty.json().summary, /No company deploy rules/);

    expectError(await put(org.members[0].token, { allowed_shapes: ["pod"] }), 403, "forbidden_role");
    expectError(await put(org.admins[0].token, { max_app_size: "huge" }), 400, "invalid_request");
    expectError(await put(org.admins[0].token, { allowed_shapes: [] }), 400, "invalid_request");
    expectError(await put(org.admins[0].token, { nope: true }), 400, "invalid_request");
    const badPreset = await put(org.admins[0].token, {
      allowed_shapes: ["pod"],
      presets: [{ name: "db", shape: "database", size: "dev" }],
    });
    expectError(badPreset, 400, "invalid_request");
    assert.match(badPreset.json().error.message, /preset.*allowed_shapes/s);

    const rules = {
      allowed_shapes: ["pod", "pod-group", "database", "volume"],
      max_app_size: "micro",
      gpu_allowed: false,
      database_sizes: ["dev"],
      features: { ha: false },
      image_prefixes: ["registry.example.com/"],
      limits: { max_replicas: 3 },
      presets: [
        {
          name: "web",
          description: "a small web app",
          shape: "pod",
          size: "nano",
          image: "registry.example.com/web:1",
        },
      ],
    };
    const ok = await put(org.admins[0].token, rules);
    assert.equal(ok.statusCode, 200, ok.body);
    const got = (await call(t.app, { url: "/v1/org/deploy-rules", token: org.members[0].token })).json();
    assert.deepEqual(got.rules, rules);
    assert.equal(got.summary_generated, true);
    assert.match(got.summary, /Allowed shapes: pod, pod-group, database, volume\./);
    assert.match(got.summary, /size micro at most/);
    assert.match(got.summary, /Images must start with: registry\.example\.com\//);
    assert.match(got.summary, /Preset "web"/);

    const own = await put(org.admins[0].token, { ...rules, summary: "Ask #platform before deploying." });
    assert.equal(own.json().summary, "Ask #platform before deploying.");
    assert.equal(own.json().summary_generated, false);
    // an organization key acts as the issuing admin; the owner counts as admin
    assert.equal((await put(org.owner.token, rules)).statusCode, 200);
  });

  test("every creation path in the company context refuses what the rules forbid, naming the rule", async () => {
    const m = org.members[0].token;
    refused(await post(m, "/v1/static", { name: "rules-site" }), /allowed_shapes.*site/);
    refused(
      await post(m, "/v1/buckets", { name: `rules-bucket-${randomUUID().slice(0, 8)}` }),
      /allowed_shapes.*bucket/,
    );
    refused(await post(m, "/v1/databases", { name: "rules-db", size: "basic" }), /database_sizes.*basic/);
    refused(
      await post(m, "/v1/pods", { name: "rules-pod", image: "docker.io/library/busybox:latest" }),
      /image_prefixes.*busybox/,
    );
    refused(
      await post(m, "/v1/pods", { name: "rules-pod", image: "registry.example.com/web:1", size: "cpu-small" }),
      /max_app_size.*cpu-small/,
    );
    refused(
      await post(m, "/v1/pod-groups", {
        name: "rules-group",
        image: "registry.example.com/web:1",
        replica_min: 1,
        replica_max: 5,
      }),
      /limits\.max_replicas/,
    );
    refused(await post(m, "/v1/builds", {}), /allowed_shapes.*build/);
    refused(await post(m, "/v1/sandboxes", {}), /allowed_shapes.*sandbox/);
    // nothing was created for the organization
    const { rows } = await t.db.query(
      `SELECT (SELECT count(*) FROM static_sites WHERE owner_kind = 'org')::int
            + (SELECT count(*) FROM databases WHERE owner_kind = 'org')::int
            + (SELECT count(*) FROM pods WHERE owner_kind = 'org')::int
            + (SELECT count(*) FROM sandboxes WHERE owner_kind = 'org')::int AS n`,
    );
    assert.equal(rows[0].n, 0);
  });

  test("updates are judged too: a pod's new image, a pod group's replica_max", async () => {
    // no job workers in this app: the pods are recorded, never started
    const m = org.members[0].token;
    const pod = await post(m, "/v1/pods", { name: "rules-ok", image: "registry.example.com/web:1" });
    assert.equal(pod.statusCode, 201, pod.body);
    const patch = (url: string, body: object) => call(t.app, { method: "PATCH", url, token: m, body, headers: ORG });
    refused(await patch(`/v1/pods/${pod.json().id}`, { image: "nginx:1" }), /image_prefixes.*nginx/);
    expect200(await patch(`/v1/pods/${pod.json().id}`, { image: "registry.example.com/web:2" }));
    const group = await post(m, "/v1/pod-groups", {
      name: "rules-group",
      image: "registry.example.com/web:1",
      replica_min: 1,
      replica_max: 2,
    });
    assert.equal(group.statusCode, 201, group.body);
    refused(await patch(`/v1/pod-groups/${group.json().id}`, { replica_max: 4 }), /limits\.max_replicas/);
    expect200(await patch(`/v1/pod-groups/${group.json().id}`, { replica_max: 3 }));
  });

  test("the personal context is unaffected by the organization's rules", async () => {
    const m = org.members[0].token;
    const site = await post(m, "/v1/static", { name: "personal-site" }, {});
    assert.equal(site.statusCode, 201, site.body);
    const bucket = await post(m, "/v1/buckets", { name: `personal-${randomUUID().slice(0, 8)}` }, {});
    assert.equal(bucket.statusCode, 201, bucket.body);
    // a basic database is refused for money (no balance), not by the rules
    expectError(await post(m, "/v1/databases", { name: "personal-db", size: "basic" }, {}), 402, "insufficient_funds");
  });

  test("a department's deploy_blocked stops its sub-departments' members: creations and new deployments", async () => {
    expect200(await put(org.admins[0].token, {}));
    const parent = randomUUID();
    const child = randomUUID();
    await t.db.query(
      `INSERT INTO org_departments (id, org_id, code, name, parent_id) VALUES ($1, $3, 'ENG', 'Engineering', NULL),
         ($2, $3, 'ENG-WEB', 'Web team', $1)`,
      [parent, child, org.id],
    );
    const dev = await signup(t.app);
    await addMember(t, org.id, dev, "member", child);
    const before = await post(dev.token, "/v1/static", { name: "team-site" });
    assert.equal(before.statusCode, 201, before.body);
    const site = before.json();

    await t.db.query("UPDATE org_departments SET deploy_blocked = true WHERE id = $1", [parent]);
    const res = await post(dev.token, "/v1/static", { name: "blocked-site" });
    refused(res, /Department ENG \(Engineering\) has deploy_blocked set, inherited by its sub-department ENG-WEB/);
    refused(await post(dev.token, `/v1/static/${site.slug}/deployments`, {}), /deploy_blocked/);
    // members elsewhere and the blocked member's personal context go on
    expect201(await post(org.members[0].token, "/v1/static", { name: "other-team" }));
    expect201(await post(dev.token, "/v1/static", { name: "own-site" }, {}));

    await t.db.query("UPDATE org_departments SET deploy_blocked = false WHERE id = $1", [parent]);
    expect201(await post(dev.token, `/v1/static/${site.slug}/deployments`, {}));
  });
});

function expect200(res: { statusCode: number; body: string }) {
  assert.equal(res.statusCode, 200, res.body);
}
function expect201(res: { statusCode: number; body: string }) {
  assert.equal(res.statusCode, 201, res.body);
}
