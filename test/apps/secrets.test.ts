import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, expectError, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { createAppsTestApp, waitPod } from "./lib.js";
import type { AppsState } from "../../src/apps/module.js";
import { LABEL_POD } from "../../src/apps/container-spec.js";

/**
 * Secret env values (issue 29) through HTTP on a real container: set on create, never in any answer (pod,
 * list, template, group, logs, exec, audit), sealed at rest, the container sees them; a change redeploys.
 */
describe("secret env values", () => {
  let t: TestApp;
  let user: { token: string; id: string; email: string };
  let image: string;
  const SECRET = "tok-9f8e7d6c5b4a";
  const SECRET2 = "tok-second-0a1b2c";

  const get = (url: string) => call(t.app, { url, token: user.token });
  const post = (url: string, body: unknown) => call(t.app, { method: "POST", url, token: user.token, body });
  const patch = (url: string, body: unknown) => call(t.app, { method: "PATCH", url, token: user.token, body });
  const hidden = (text: string, ...values: string[]) => {
    for (const v of values) assert.ok(!text.includes(v), `a secret shows in: ${text.slice(0, 400)}`);
  };

  before(async () => {
    image = await testImage("TEST_IMAGE_HTTPD_V1");
    t = await createAppsTestApp({ env: { APPS_DRAIN_MS: "0" } });
    user = await signup(t.app);
  });

  after(async () => {
    const apps = t.platform.state<AppsState>("apps");
    await t.db.query("UPDATE pods SET desired_state = 'removed'");
    await apps.worker.stop();
    for (const p of (await t.db.query<{ id: string }>("SELECT id FROM pods")).rows)
      for (const c of await apps.runtime.list({ [LABEL_POD]: p.id })) await apps.runtime.remove(c.name);
    for (const n of (await t.db.query<{ name: string }>("SELECT DISTINCT name FROM owner_networks")).rows)
      await apps.runtime.removeNetwork(n.name).catch(() => {});
    await t.close();
  });

  test("a pod's secret reaches the container, never an answer, a log line, exec output or the audit trail", async () => {
    expectError(
      await post("/v1/pods", { name: "both", image, env: { A: "1" }, secret_env: { A: "2" } }),
      400,
      "invalid_request",
    );
    const res = await post("/v1/pods", {
      name: "sec",
      image,
      port: 8080,
      command: ["/bin/busybox", "sh", "-c", 'echo "token=$API_TOKEN"; exec /bin/busybox httpd -f -p 8080 -h /www'],
      env: { PLAIN: "visible" },
      secret_env: { API_TOKEN: SECRET },
    });
    assert.equal(res.statusCode, 201, res.body);
    hidden(res.body, SECRET);
    const pod = res.json();
    assert.deepEqual(pod.env, { PLAIN: "visible" });
    const meta = pod.secret_env.API_TOKEN;
    assert.match(meta.fingerprint, /^hmac-sha256:[0-9a-f]{32}$/);
    assert.ok(meta.set_by.startsWith(user.email), meta.set_by);
    assert.ok(Date.parse(meta.set_at) > 0);

    hidden((await get(`/v1/pods/${pod.id}`)).body, SECRET);
    hidden((await get("/v1/pods")).body, SECRET);
    const { rows } = await t.db.query("SELECT env_sealed FROM pods WHERE id = $1", [pod.id]);
    hidden(rows[0].env_sealed, SECRET, "API_TOKEN"); // sealed at rest, the names too

    await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    let logs: string[] = [];
    for (let i = 0; i < 50 && !logs.some((l) => l.startsWith("token=")); i++) {
      logs = (await get(`/v1/pods/${pod.id}/logs`)).json().lines;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(logs.includes("token=[secret API_TOKEN]"), JSON.stringify(logs));
    const ex = await post(`/v1/pods/${pod.id}/exec`, {
      command: ["/bin/busybox", "sh", "-c", 'echo "$API_TOKEN" "${#API_TOKEN}"; echo "$API_TOKEN" >&2'],
    });
    assert.equal(ex.statusCode, 200, ex.body);
    assert.equal(ex.json().stdout, `[secret API_TOKEN] ${SECRET.length}\n`); // the container has the real value
    assert.equal(ex.json().stderr, "[secret API_TOKEN]\n");

    // a plain env change keeps the secret; naming a secret in plain env is refused
    expectError(await patch(`/v1/pods/${pod.id}`, { env: { API_TOKEN: "x" } }), 400, "invalid_request");
    const kept = await patch(`/v1/pods/${pod.id}`, { env: { PLAIN: "changed" } });
    assert.equal(kept.statusCode, 200, kept.body);
    assert.equal(kept.json().secret_env.API_TOKEN.fingerprint, meta.fingerprint);

    // a secret change is a new generation, rolled out like any change
    const changed = await patch(`/v1/pods/${pod.id}`, { secret_env: { API_TOKEN: SECRET2 } });
    assert.equal(changed.statusCode, 200, changed.body);
    hidden(changed.body, SECRET, SECRET2);
    const next = changed.json();
    assert.equal(next.generation, kept.json().generation + 1);
    assert.notEqual(next.secret_env.API_TOKEN.fingerprint, meta.fingerprint);
    await waitPod(t, user.token, pod.id, (p) => p.state === "running" && p.serving_generation === next.generation);
    const ex2 = await post(`/v1/pods/${pod.id}/exec`, {
      command: ["/bin/busybox", "sh", "-c", 'echo "${#API_TOKEN}"'],
    });
    assert.equal(ex2.json().stdout, `${SECRET2.length}\n`);
    const succeeded = (await get("/v1/events?type=pod.rollout.succeeded")).json().items;
    assert.ok(
      succeeded.some((e: any) => e.resource.id === pod.id && e.data.generation === next.generation),
      JSON.stringify(succeeded),
    );
    // the generic deploy event comes with it (the one a static site's deployment also sends)
    const deployed = (await get(`/v1/events?type=deploy.succeeded&resource_id=${pod.id}`)).json().items;
    assert.ok(
      deployed.some((e: any) => e.data.resource_kind === "pod" && e.data.generation === next.generation),
      JSON.stringify(deployed),
    );

    // removed with null
    const gone = await patch(`/v1/pods/${pod.id}`, { secret_env: { API_TOKEN: null } });
    assert.deepEqual(gone.json().secret_env, {});

    const audit = await get("/v1/me/audit");
    assert.equal(audit.statusCode, 200, audit.body);
    assert.ok(audit.body.includes("updatePod"), audit.body.slice(0, 300));
    hidden(audit.body, SECRET, SECRET2);
    const rowsText = JSON.stringify(
      (await t.db.query("SELECT * FROM audit_log WHERE account_id = $1", [user.id])).rows,
    );
    hidden(rowsText, SECRET, SECRET2);
    const keysText = JSON.stringify((await t.db.query("SELECT * FROM idempotency_keys")).rows);
    hidden(keysText, SECRET, SECRET2);
  });

  test("templates and groups keep secrets sealed and hand them to the pods they make", async () => {
    const tpl = await post("/v1/pod-templates", { name: "tpl", image, port: 8080, secret_env: { DB_PASS: SECRET } });
    assert.equal(tpl.statusCode, 201, tpl.body);
    hidden(tpl.body, SECRET);
    assert.deepEqual(tpl.json().env, {});
    const fp = tpl.json().secret_env.DB_PASS.fingerprint;
    hidden((await get("/v1/pod-templates")).body, SECRET);

    const fromTpl = await post("/v1/pods", { template: "tpl", name: "from-tpl" });
    assert.equal(fromTpl.statusCode, 201, fromTpl.body);
    hidden(fromTpl.body, SECRET);
    assert.equal(fromTpl.json().secret_env.DB_PASS.fingerprint, fp);
    assert.equal(fromTpl.json().secret_env.DB_PASS.set_at, tpl.json().secret_env.DB_PASS.set_at);

    const group = await post("/v1/pod-groups", {
      name: "grp",
      image,
      port: 8080,
      replica_min: 1,
      replica_max: 1,
      secret_env: { DB_PASS: SECRET },
    });
    assert.equal(group.statusCode, 201, group.body);
    hidden(group.body, SECRET);
    assert.equal(group.json().secret_env.DB_PASS.fingerprint, fp);
    const member = (await get(`/v1/pods/${group.json().replicas[0].id}`)).json();
    assert.equal(member.secret_env.DB_PASS.fingerprint, fp);
    hidden((await get("/v1/pod-groups")).body, SECRET);
  });

  test("a failing release's secrets are masked in its check failure, its rollback log lines and its release", async () => {
    const NEW = "tok-new-release-33aa";
    const res = await post("/v1/pods", {
      name: "sec-rollback",
      image,
      port: 8080,
      secret_env: { API_TOKEN: SECRET },
      deploy: { deadline_seconds: 8, stop_grace_seconds: 1 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const pod = res.json();
    await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    // the new release prints its secret at start and from its (failing) exec readiness check
    const bad = await patch(`/v1/pods/${pod.id}`, {
      command: ["/bin/busybox", "sh", "-c", 'echo "start $API_TOKEN"; exec /bin/busybox httpd -f -p 8080 -h /www'],
      secret_env: { API_TOKEN: NEW },
      checks: {
        readiness: {
          type: "exec",
          command: ["/bin/busybox", "sh", "-c", 'echo "bad $API_TOKEN" >&2; exit 1'],
          interval_seconds: 1,
          // a podman exec took over the default 2 s on a loaded CI machine: the reason was the timeout, not the output
          timeout_seconds: 6,
        },
      },
    });
    assert.equal(bad.statusCode, 200, bad.body);
    const rolled = await waitPod(
      t,
      user.token,
      pod.id,
      (p) => p.rollout.state === "rollback" && p.serving_generation === p.generation,
      40_000,
    );
    const text = JSON.stringify(rolled);
    hidden(text, SECRET, NEW);
    assert.match(rolled.rollout.rollback.reason, /bad \[secret API_TOKEN\]/);
    assert.ok(rolled.rollout.rollback.log_lines.includes("start [secret API_TOKEN]"), text);
    hidden((await get(`/v1/pods/${pod.id}/releases`)).body, SECRET, NEW);
    const stored = await t.db.query("SELECT * FROM pods WHERE id = $1", [pod.id]);
    hidden(JSON.stringify(stored.rows), SECRET, NEW);
    const releases = await t.db.query("SELECT * FROM pod_releases WHERE pod_id = $1", [pod.id]);
    hidden(JSON.stringify(releases.rows), SECRET, NEW);
    // the rollback is an event (issue 31's outbox), with the masked reason
    const events = await get("/v1/events?type=pod.rollout.rolled_back");
    assert.equal(events.statusCode, 200, events.body);
    const ev = events.json().items.find((e: any) => e.resource.id === pod.id);
    assert.ok(ev, events.body);
    assert.equal(ev.data.from_release, 2);
    hidden(events.body, SECRET, NEW);
    const failed = await get(`/v1/events?type=deploy.failed&resource_id=${pod.id}`);
    assert.equal(failed.json().items[0]?.data.from_release, 2, failed.body);
    hidden(failed.body, SECRET, NEW);
  });
});
