/**
 * Organization external hosts through HTTP (the admins' rows and the agent's protocol, driven here by the test as
 * an agent would; test/orgs/host-agent.test.ts runs the real agent process): registration with the one-time
 * bootstrap token, re-issue, placement of company pods by host_id and host_labels, reports, offline → unknown,
 * and deletion (409 host_in_use while a pod is placed there; the credential dies with the host).
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, type TestApp } from "../helpers/app.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

let t: TestApp;
let org: TestOrg;
let other: TestOrg;
const IMAGE = "localhost/platform-test/httpd:v1"; // never run here: the test plays the agent

before(async () => {
  t = await createTestApp({
    startJobs: true,
    env: {
      APPS_ALLOW_LOCAL_IMAGES: "1",
      HOST_HEARTBEAT_SECONDS: "1",
      HOST_MISSED_BEATS: "2",
      AGENT_PLATFORM_URL: "https://control.example.test",
      AGENT_DOWNLOAD_URL: "https://downloads.example.test/platform.tar.gz",
    },
  });
  org = await makeOrg(t, { admins: 1, members: 1 });
  other = await makeOrg(t, { admins: 1, members: 0 });
});
after(async () => t?.close());

const admin = () => org.admins[0].token;
const newHost = async (body: object, token = admin()) => {
  const res = await call(t.app, { method: "POST", url: "/v1/org/hosts", token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
};
const register = (token: string, extra: object = {}) =>
  call(t.app, {
    method: "POST",
    url: "/v1/agent/register",
    headers: { authorization: `Bearer ${token}` },
    body: {
      machine_name: "box-1",
      agent_version: "1",
      gpu_slots: 0,
      capacity: { cpus: 2, memory_bytes: 1 << 30 },
      labels: {},
      ...extra,
    },
  });
const agent = (credential: string) => ({ authorization: `Bearer ${credential}` });
const desired = (credential: string, query = "") =>
  call(t.app, { url: `/v1/agent/desired${query}`, headers: agent(credential) });
const report = (credential: string, pods: object[]) =>
  call(t.app, { method: "POST", url: "/v1/agent/report", headers: agent(credential), body: { containers: 0, pods } });
const getHost = async (id: string) => (await call(t.app, { url: `/v1/org/hosts/${id}`, token: admin() })).json();

async function registered(name: string, labels: Record<string, string> = {}) {
  const made = await newHost({ name });
  const res = await register(made.bootstrap.token, { labels });
  assert.equal(res.statusCode, 201, res.body);
  return { id: made.host.id as string, credential: res.json().credential as string };
}

describe("external hosts", () => {
  test("register: admins get a pending host, a one-time token and install.shell; members 403, outsiders 404", async () => {
    const made = await newHost({ name: "rack-1", region: "seoul" });
    assert.equal(made.host.status, "pending");
    assert.equal(made.host.region, "seoul");
    assert.equal(made.host.active_pods, 0);
    assert.match(made.bootstrap.token, /^hbt_/);
    assert.ok(Date.parse(made.bootstrap.expires_at) > Date.now() + 23 * 3600_000);
    const shell: string = made.install.shell;
    assert.match(shell, /^curl -fsSL 'https:\/\/control\.example\.test\/v1\/agent\/install\.sh' \| env /);
    assert.ok(shell.includes(`AGENT_BOOTSTRAP_TOKEN='${made.bootstrap.token}'`));
    assert.ok(shell.includes("AGENT_DOWNLOAD_URL='https://downloads.example.test/platform.tar.gz'"));
    const script = await call(t.app, { url: "/v1/agent/install.sh" });
    assert.equal(script.statusCode, 200);
    assert.match(script.body, /apt-get install -y -q podman runc/);
    // only the hash is stored
    const { rows } = await t.db.query("SELECT bootstrap_hash FROM org_hosts WHERE id = $1", [made.host.id]);
    assert.equal(rows[0].bootstrap_hash.length, 32);

    const list = await call(t.app, { url: "/v1/org/hosts", token: org.owner.token });
    assert.equal(list.statusCode, 200);
    assert.ok(list.json().items.some((h: any) => h.id === made.host.id && h.status === "pending"));
    expectError(await call(t.app, { url: "/v1/org/hosts", token: org.members[0].token }), 403, "forbidden_role");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/org/hosts", token: org.members[0].token, body: { name: "x" } }),
      403,
      "forbidden_role",
    );
    expectError(await call(t.app, { url: "/v1/org/hosts", token: org.outsider.token }), 404, "not_found");
    const foreign = `/v1/org/hosts/${made.host.id}`;
    expectError(await call(t.app, { url: foreign, token: other.admins[0].token }), 404, "not_found");
    expectError(await call(t.app, { method: "DELETE", url: foreign, token: other.admins[0].token }), 404, "not_found");
    expectError(
      await call(t.app, { method: "POST", url: "/v1/org/hosts", token: admin(), body: { name: "bad name" } }),
      400,
      "invalid_request",
    );
  });

  test("bootstrap: re-issue replaces the token of a pending host; used, replaced or expired tokens are refused; 409 once registered", async () => {
    const made = await newHost({ name: "rack-2" });
    const re = await call(t.app, { method: "POST", url: `/v1/org/hosts/${made.host.id}/bootstrap`, token: admin() });
    assert.equal(re.statusCode, 200, re.body);
    assert.notEqual(re.json().bootstrap.token, made.bootstrap.token);
    assert.ok(re.json().install.shell.includes(re.json().bootstrap.token));
    expectError(await register(made.bootstrap.token), 401, "auth_required"); // replaced
    const ok = await register(re.json().bootstrap.token);
    assert.equal(ok.statusCode, 201, ok.body);
    assert.match(ok.json().credential, /^hac_/);
    assert.equal(ok.json().host_id, made.host.id);
    expectError(await register(re.json().bootstrap.token), 401, "auth_required"); // used
    const host = await getHost(made.host.id);
    assert.equal(host.status, "online");
    assert.equal(host.machine_name, "box-1");
    assert.ok(host.registered_at && host.last_heartbeat_at);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/org/hosts/${made.host.id}/bootstrap`, token: admin() }),
      409,
      "conflict",
    );
    expectError(
      await call(t.app, {
        method: "POST",
        url: `/v1/org/hosts/${made.host.id}/bootstrap`,
        token: org.members[0].token,
      }),
      403,
      "forbidden_role",
    );

    const late = await newHost({ name: "rack-3" });
    await t.db.query("UPDATE org_hosts SET bootstrap_expires_at = now() - interval '1 second' WHERE id = $1", [
      late.host.id,
    ]);
    expectError(await register(late.bootstrap.token), 401, "auth_required");
    assert.equal((await getHost(late.host.id)).status, "pending");
    expectError(await desired("hac_not-a-credential"), 401, "auth_required");
    expectError(await register(""), 401, "auth_required"); // no bearer at all
    expectError(await call(t.app, { url: "/v1/agent/desired" }), 401, "auth_required");
  });

  test("placement: company pods by host_id or host_labels; the agent's long poll wakes; reports set the pod's state", async () => {
    const a = await registered("gpu-box", { zone: "a" });
    const first = await desired(a.credential);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().pods, []);
    // a long poll with the current version waits until a pod is placed here
    const started = Date.now();
    const waiting = desired(a.credential, `?version=${first.json().version}&wait=20`);
    const member = org.members[0].token;
    const created = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: member,
      headers: ORG,
      body: { name: "ext-app", image: IMAGE, port: 8080, env: { GREETING: "hi" }, host_id: a.id },
    });
    assert.equal(created.statusCode, 201, created.body);
    const pod = created.json();
    assert.equal(pod.host_id, a.id);
    const woke = await waiting;
    assert.ok(Date.now() - started < 10_000, "the poll answered when the pod was placed");
    const d = woke.json();
    assert.notEqual(d.version, first.json().version);
    assert.equal(d.pods.length, 1);
    assert.equal(d.pods[0].pod_id, pod.id);
    assert.equal(d.pods[0].spec.image, IMAGE);
    assert.equal(d.pods[0].spec.env.GREETING, "hi");
    assert.equal(d.pods[0].spec.labels["platform.host"], a.id);
    assert.equal(d.pods[0].spec.labels["platform.pod"], pod.id);
    // no reconcile job queued for an external host: its agent follows by itself
    const { rows: jobs } = await t.db.query("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1", [
      `apps.reconcile.${a.id}`,
    ]);
    assert.equal(jobs[0].n, 0);

    const seen = {
      pod_id: pod.id,
      generation: 1,
      desired_state: "running",
      state: "running",
      reason: null,
      address: "127.0.0.1:41234",
      serving_generation: 1,
      restart_count: 0,
    };
    const r = await report(a.credential, [seen]);
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().version, d.version);
    const running = (await call(t.app, { url: `/v1/pods/${pod.id}`, token: member, headers: ORG })).json();
    assert.equal(running.state, "running");
    assert.equal(running.address, "127.0.0.1:41234");
    assert.equal((await getHost(a.id)).active_pods, 1);
    // a report for an older generation or another host's pod changes nothing
    const b = await registered("other-box", { zone: "b" });
    await report(b.credential, [{ ...seen, state: "failed", serving_generation: null }]);
    assert.equal(
      (await call(t.app, { url: `/v1/pods/${pod.id}`, token: member, headers: ORG })).json().state,
      "running",
    );

    // host_labels picks an online host carrying them
    const byLabel = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: member,
      headers: ORG,
      body: { name: "ext-lbl", image: IMAGE, host_labels: { zone: "b" } },
    });
    assert.equal(byLabel.statusCode, 201, byLabel.body);
    assert.equal(byLabel.json().host_id, b.id);
    const none = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: member,
      headers: ORG,
      body: { name: "ext-none", image: IMAGE, host_labels: { zone: "z" } },
    });
    expectError(none, 503, "host_unavailable");

    // personal pods cannot name a host; another organization's host is 404; a pending host is 503
    const personal = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: member,
      body: { name: "mine", image: IMAGE, host_id: a.id },
    });
    expectError(personal, 400, "invalid_request");
    const foreign = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: other.owner.token,
      headers: ORG,
      body: { name: "theirs", image: IMAGE, host_id: a.id },
    });
    expectError(foreign, 404, "not_found");
    const pending = await newHost({ name: "not-yet" });
    const early = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: member,
      headers: ORG,
      body: { name: "early", image: IMAGE, host_id: pending.host.id },
    });
    expectError(early, 503, "host_unavailable");

    // deletion waits for the pods; then the credential stops working
    expectError(
      await call(t.app, { method: "DELETE", url: `/v1/org/hosts/${b.id}`, token: admin() }),
      409,
      "host_in_use",
    );
    const gone = await call(t.app, {
      method: "DELETE",
      url: `/v1/pods/${byLabel.json().id}`,
      token: member,
      headers: ORG,
    });
    assert.equal(gone.statusCode, 202, gone.body);
    const del = await call(t.app, { method: "DELETE", url: `/v1/org/hosts/${b.id}`, token: admin() });
    assert.equal(del.statusCode, 200, del.body);
    expectError(await desired(b.credential), 401, "auth_required");
    expectError(await call(t.app, { url: `/v1/org/hosts/${b.id}`, token: admin() }), 404, "not_found");

    // the agent goes quiet: the host turns offline and its running pod unknown (not served), until it reports again
    const deadline = Date.now() + 15_000;
    let p = running;
    while (Date.now() < deadline && p.state !== "unknown") {
      await new Promise((res) => setTimeout(res, 200));
      p = (await call(t.app, { url: `/v1/pods/${pod.id}`, token: member, headers: ORG })).json();
    }
    assert.equal(p.state, "unknown");
    assert.match(p.state_reason, /offline/);
    assert.equal(p.address, null);
    assert.equal((await getHost(a.id)).status, "offline");
    await report(a.credential, [seen]);
    assert.equal((await getHost(a.id)).status, "online");
    assert.equal(
      (await call(t.app, { url: `/v1/pods/${pod.id}`, token: member, headers: ORG })).json().state,
      "running",
    );
  });
});
