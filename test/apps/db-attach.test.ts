import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, signup, type TestApp } from "../helpers/app.js";
import type pg from "pg";
import { connect, createRunning, waitCommand } from "../databases/lib.js";
import { containersOf, createAppsTestApp, createPod, httpGet, waitPod } from "./lib.js";
import { buildNodePgImage } from "./node-pg-image.js";

/**
 * A database attached to a pod, end to end: a real managed PostgreSQL server and a real podman container running
 * an app that holds one connection (test/apps/node-pg-image.ts). The pod gets DATABASE_URL with the host rewritten
 * to its network's gateway, connects through an allowlist that admits nothing else (its owner's pod network is
 * always admitted, another owner's is not), is listed under attached-apps, and keeps answering while a password
 * rotation rolls it onto a replica started with the new password: the rotation ends every other session of the
 * old password at once, those from the owner's app networks after DB_APP_SESSION_GRACE_S.
 */
const GRACE_S = 20;
describe("a database attached to a pod on real containers", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let other: { token: string; id: string };
  let image: string;
  let db: any;
  let pod: any;
  /** the host as the owner's pods see it (their network's gateway) */
  let gateway: string;
  /** sessions of the first password: from loopback (opened before the allowlist) and from the owner's network */
  let outsider: pg.Client;
  let fromAppNetwork: pg.Client;

  before(async () => {
    image = await buildNodePgImage();
    // the drain is the edge's switch-over time: long enough for a client that re-reads the address each request
    t = await createAppsTestApp({ env: { APPS_DRAIN_MS: "1000", DB_APP_SESSION_GRACE_S: String(GRACE_S) } });
    user = await signup(t.app);
    other = await signup(t.app);
    db = await createRunning(t, user.token, { name: "attached-db" });
    outsider = await connect(db.database_url);
  });
  after(async () => {
    for (const c of [outsider, fromAppNetwork]) await c?.end().catch(() => {});
    for (const u of [user, other])
      for (const p of (await call(t.app, { url: "/v1/pods", token: u.token })).json())
        await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token: u.token });
    await new Promise((r) => setTimeout(r, 1500));
    await t.close();
  });

  const exec = async (token: string, podId: string, command: string[]) => {
    const res = await call(t.app, { method: "POST", url: `/v1/pods/${podId}/exec`, token, body: { command } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { exit_code: number; stdout: string; stderr: string };
  };
  /** The database's URL with the host as "gateway": the probe connects through its own network's gateway. */
  const viaGateway = () => {
    const u = new URL(db.database_url);
    u.hostname = "gateway";
    return u.toString();
  };

  test("the pod connects with the injected DATABASE_URL through an allowlist that admits only its owner's pods", async () => {
    // a non-empty allowlist naming nothing of this machine: only the owner's pod networks get in besides it
    const res = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${db.id}/allowlist`,
      token: user.token,
      body: { allowlist: [{ cidr: "192.0.2.0/24", label: "x" }] },
    });
    assert.equal(res.statusCode, 202, res.body);
    await waitCommand(t, user.token, db.id, res.json().command_id, 30_000);

    pod = await createPod(t, user.token, { name: "db-app", image, port: 8080, databases: [db.slug] });
    assert.deepEqual(pod.databases, [db.id]);
    const running = await waitPod(t, user.token, pod.id, (p) => p.state === "running", 60_000);
    const answer = await httpGet(`http://${running.address}/`);
    assert.equal(answer.status, 200, answer.body);
    assert.match(answer.body, new RegExp(`^ok 1 ${db.user}$`));
    assert.equal((await httpGet(`http://${running.address}/env`)).body, db.password);
    assert.equal(running.restart_count, 0, `the first connection worked: ${running.state_reason}`);
    // the URL names the gateway of the owner's network, not the host's loopback
    const env = await exec(user.token, pod.id, ["sh", "-c", 'echo "$DATABASE_URL"; echo "$PGHOST"']);
    const [url, pghost] = env.stdout.trim().split("\n");
    assert.match(pghost!, /^\d+\.\d+\.\d+\.\d+$/);
    assert.notEqual(pghost, "127.0.0.1");
    assert.equal(new URL(url!).hostname, pghost);
    gateway = pghost!;
    const probe = await exec(user.token, pod.id, ["/usr/local/bin/node", "/app/probe.js", viaGateway()]);
    assert.equal(probe.exit_code, 0, probe.stdout + probe.stderr);
    assert.equal(probe.stdout.trim(), `connected via ${pghost}`);

    // another owner's container with the right password, through its own network's gateway: pg_hba refuses it
    const stranger = await createPod(t, other.token, {
      name: "stranger",
      image,
      port: 8080,
      command: ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/tmp"],
    });
    await waitPod(t, other.token, stranger.id, (p) => p.state === "running", 60_000);
    const refused = await exec(other.token, stranger.id, ["/usr/local/bin/node", "/app/probe.js", viaGateway()]);
    assert.equal(refused.exit_code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stdout, /no pg_hba\.conf entry for host "\d+\.\d+\.\d+\.\d+"/);
    assert.ok(!refused.stdout.includes(`via ${pghost}:`), "the stranger went through its own network");
  });

  test("attached-apps lists the pod", async () => {
    const res = await call(t.app, { url: `/v1/databases/${db.id}/attached-apps`, token: user.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [{ kind: "pod", id: pod.id, name: "db-app", slug: pod.slug, state: "running" }]);
    const bySlug = await call(t.app, { url: `/v1/databases/${db.slug}/attached-apps`, token: user.token });
    assert.deepEqual(bySlug.json(), res.json());
  });

  test("rotate-password rolls the pod onto the new password while every request keeps answering", async () => {
    // a session of the owner's network that no attached app holds: the host's own address on that network
    const u = new URL(db.database_url);
    u.hostname = gateway;
    fromAppNetwork = await connect(u.toString(), { from: gateway });
    const before = (await call(t.app, { url: `/v1/pods/${pod.id}`, token: user.token })).json();
    assert.equal(before.serving_generation, before.generation);
    const failures: string[] = [];
    let answered = 0;
    let rotating = false;
    let servedNewAt: number | null = null;
    const loop = (async () => {
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline && (servedNewAt === null || Date.now() - servedNewAt < 2000)) {
        // the address changes when a new replica serves: read it for every request, as the edge would
        const p = (await call(t.app, { url: `/v1/pods/${pod.id}`, token: user.token })).json();
        if (rotating && servedNewAt === null && p.serving_generation > before.generation) servedNewAt = Date.now();
        try {
          const r = await httpGet(`http://${p.address}/`);
          if (r.status === 200 && /^ok \d+ /.test(r.body)) answered++;
          else failures.push(`${p.address} (gen ${p.serving_generation}): ${r.status} ${r.body}`);
        } catch (err) {
          failures.push(`${p.address} (gen ${p.serving_generation}): ${(err as Error).message}`);
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 500));
    rotating = true;
    const res = await call(t.app, { method: "POST", url: `/v1/databases/${db.id}/rotate-password`, token: user.token });
    await loop;
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json();
    assert.deepEqual(rotated.apps_restarting, [pod.id]);
    assert.notEqual(rotated.password, db.password);
    assert.ok(servedNewAt !== null, "a new generation never served");
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${failures.length + answered} requests failed`);
    assert.ok(answered > 10, `only ${answered} requests answered`);
    // the old password's other sessions ended at once; the owner's app network keeps its own for the grace
    await assert.rejects(outsider.query("SELECT 1"), /terminat|connection/i);
    assert.deepEqual((await fromAppNetwork.query("SELECT 1 AS one")).rows, [{ one: 1 }]);

    const after = await waitPod(t, user.token, pod.id, (p) => p.state === "running");
    assert.ok(after.generation > before.generation, `generation ${before.generation} → ${after.generation}`);
    assert.equal(after.serving_generation, after.generation);
    assert.notEqual(after.address, before.address, "a new replica serves");
    assert.equal((await httpGet(`http://${after.address}/env`)).body, rotated.password);
    const answer = await httpGet(`http://${after.address}/`);
    assert.equal(answer.status, 200, answer.body);
    assert.match(answer.body, /^ok \d+ /);
    // the old replica is gone once the new one serves
    const deadline = Date.now() + 10_000;
    while ((await containersOf(pod.id)).length !== 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal((await containersOf(pod.id)).length, 1);

    // after the grace the old sessions from the app network end too; the new replica's session stays
    const until = Date.now() + (GRACE_S + 15) * 1000;
    let ended: unknown = null;
    while (!ended && Date.now() < until) {
      ended = await fromAppNetwork.query("SELECT 1").then(
        () => null,
        (err) => err,
      );
      if (!ended) await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(ended, "a session of the old password outlived the grace");
    const still = await httpGet(`http://${after.address}/`);
    assert.equal(still.status, 200, still.body);
  });
});
