import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import type { AttachedApp, AttachmentConsumer } from "../../src/apps/contract.js";
import type { Owner } from "../../src/kernel/owner.js";
import { OWNER_NETWORKS_JOB } from "../../src/databases/attachments.js";
import { ApiError } from "../../src/http/errors.js";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, connectError, createRunning, eventually, query, waitCommand, waitFor } from "./lib.js";

/**
 * Apps attached to databases, the databases side, on real managed servers: what `resolve` gives a pod (a URL
 * that connects, the new password after a rotation), the rotation rolling attached apps, attached-apps, the
 * allowlist always admitting the owner's app networks (loopback addresses 127.0.0.x stand in for pod networks:
 * on Linux every one of them is local, and a client binds its source address), and servers reachable on a
 * non-loopback address. The apps area is a fake consumer registered on the kernel.
 */

/** The apps side as a test controls it: which apps use which database, the owners' networks, and every call. */
class FakeApps implements AttachmentConsumer {
  nets = new Map<string, string[]>();
  attached = new Map<string, AttachedApp[]>();
  refreshed: string[] = [];
  failRefresh = 0;
  async attachedTo(_q: unknown, resource: string, id: string): Promise<AttachedApp[]> {
    return resource === "databases" ? (this.attached.get(id) ?? []) : [];
  }
  async refresh(_q: unknown, resource: string, id: string): Promise<string[]> {
    this.refreshed.push(`${resource}:${id}`);
    if (this.failRefresh > 0) {
      this.failRefresh--;
      throw new Error("the apps side is down");
    }
    return (this.attached.get(id) ?? []).map((a) => a.id);
  }
  async sourceCidrs(_q: unknown, owner: Owner): Promise<string[]> {
    return this.nets.get(owner.id) ?? [];
  }
}

/** The first non-loopback IPv4 address of this machine. */
function outsideAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return null;
}

const onHost = (url: string, host: string) => {
  const u = new URL(url);
  u.hostname = host;
  return u.toString();
};

describe("databases attached to apps", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let other: { token: string; id: string };
  let db: any;
  const apps = new FakeApps();
  const owner = (): Owner => ({ kind: "account", id: user.id });
  const resolve = (o: Owner, ref: string) =>
    t.platform.kernel
      .all("attachables")
      .find((a) => a.resource === "databases")!
      .resolve(t.db, o, ref);

  before(async () => {
    t = await createTestApp({ startJobs: true });
    t.platform.kernel.replace("attachments", apps);
    user = await signup(t.app);
    other = await signup(t.app);
    db = await createRunning(t, user.token, { name: "attach-db" });
  });
  after(async () => {
    await t.close();
  });

  test("resolve: the owner's database by id or slug gives env whose URL connects; others get nothing", async () => {
    const bySlug = await resolve(owner(), db.slug);
    assert.ok(bySlug);
    assert.equal(bySlug.id, db.id);
    const env = bySlug.env;
    assert.equal(env.DATABASE_URL, db.database_url, "the URL of the creation answer, password included");
    assert.deepEqual(
      { host: env.PGHOST, port: env.PGPORT, database: env.PGDATABASE, user: env.PGUSER, password: env.PGPASSWORD },
      { host: db.host, port: String(db.port), database: db.database, user: db.user, password: db.password },
    );
    assert.equal((await query(env.DATABASE_URL, "SELECT current_user AS u"))[0].u, db.user);
    assert.deepEqual((await resolve(owner(), db.id))?.env, env);
    assert.equal(await resolve({ kind: "account", id: other.id }, db.id), null, "another owner's database");
    assert.equal(await resolve(owner(), "no-such-db"), null);
    // the password is kept sealed, apart from the initial one the reveal forgets
    const stored = (await t.db.query("SELECT app_password FROM databases WHERE id = $1", [db.id])).rows[0];
    assert.match(stored.app_password, /^enc:v1:/);
    assert.ok(!stored.app_password.includes(db.password));
    // an instance from before app passwords were kept: its initial password, while kept and never rotated
    await t.db.query("UPDATE databases SET app_password = NULL WHERE id = $1", [db.id]);
    try {
      assert.equal((await resolve(owner(), db.id))?.env.PGPASSWORD, db.password);
    } finally {
      await t.db.query("UPDATE databases SET app_password = $2 WHERE id = $1", [db.id, stored.app_password]);
    }
    const revealed = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${db.id}/initial-credentials`,
      token: user.token,
    });
    assert.equal(revealed.statusCode, 200);
    assert.equal((await resolve(owner(), db.id))?.env.PGPASSWORD, db.password, "still known after the reveal");
  });

  test("a server listens beyond loopback: a client reaches it on the machine's own address", async () => {
    const ip = outsideAddress();
    assert.ok(ip, "this machine has a non-loopback IPv4 address");
    assert.deepEqual(await query(db.database_url, "SHOW listen_addresses"), [{ listen_addresses: "*" }]);
    // the allowlist is empty: every address is admitted, over TLS
    assert.equal(await connectError(onHost(db.database_url, ip)), null);
  });

  test("attached-apps lists what the apps side reports; another owner gets 404", async () => {
    const pod: AttachedApp = { kind: "pod", id: "pod-1", name: "web", slug: "web", state: "running" };
    const worker: AttachedApp = { kind: "pod", id: "pod-2", name: "worker", slug: null, state: "stopped" };
    apps.attached.set(db.id, [pod, worker]);
    const res = await call(t.app, { url: `/v1/databases/${db.slug}/attached-apps`, token: user.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [pod, worker]);
    expectError(await call(t.app, { url: `/v1/databases/${db.id}/attached-apps`, token: other.token }), 404);
  });

  test("rotate-password: resolve gives the new password, the old one fails, attached apps are rolled", async () => {
    apps.refreshed = [];
    const res = await call(t.app, { method: "POST", url: `/v1/databases/${db.id}/rotate-password`, token: user.token });
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json();
    assert.deepEqual(rotated.apps_restarting, ["pod-1", "pod-2"]);
    assert.deepEqual(apps.refreshed, [`databases:${db.id}`], "refresh is asked once, with the database id");
    const env = (await resolve(owner(), db.id))!.env;
    assert.equal(env.PGPASSWORD, rotated.password);
    assert.equal(env.DATABASE_URL, rotated.database_url);
    assert.equal(await connectError(env.DATABASE_URL), null);
    assert.match(String(await connectError(db.database_url)), /password authentication failed/);
    db.database_url = rotated.database_url;
    db.password = rotated.password;
  });

  test("a failing refresh keeps the rotation: the new password is answered and in force, the roll is retried", async () => {
    apps.refreshed = [];
    apps.failRefresh = 1;
    const res = await call(t.app, { method: "POST", url: `/v1/databases/${db.id}/rotate-password`, token: user.token });
    assert.equal(res.statusCode, 200, res.body);
    const rotated = res.json();
    assert.deepEqual(rotated.apps_restarting, []);
    assert.equal((await resolve(owner(), db.id))!.env.PGPASSWORD, rotated.password);
    assert.equal(await connectError(rotated.database_url), null);
    const d = await waitFor(t, user.token, db.id, (x) =>
      x.commands?.some((c: any) => c.kind === "refresh_apps" && c.status === "succeeded"),
    );
    assert.ok(d);
    assert.deepEqual(apps.refreshed, [`databases:${db.id}`, `databases:${db.id}`]);
    db.database_url = rotated.database_url;
    db.password = rotated.password;
  });

  test("an instance from before app credentials were kept: the initial password while valid, else a clear 400", async () => {
    const saved = (await t.db.query("SELECT app_password FROM databases WHERE id = $1", [db.id])).rows[0].app_password;
    await t.db.query("UPDATE databases SET app_password = NULL WHERE id = $1", [db.id]);
    try {
      // revealed and rotated since: the platform cannot know it
      await assert.rejects(
        resolve(owner(), db.id),
        (err) => err instanceof ApiError && err.code === "invalid_request" && /rotate it/.test(err.message),
      );
    } finally {
      await t.db.query("UPDATE databases SET app_password = $2 WHERE id = $1", [db.id, saved]);
    }
  });

  test("allowlist: the owner's app networks are always admitted, other sources are not; network changes are applied", async () => {
    apps.nets.set(user.id, ["127.0.0.3/32"]);
    apps.nets.set(other.id, ["127.0.0.4/32"]);
    const res = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${db.id}/allowlist`,
      token: user.token,
      body: { allowlist: [{ cidr: "127.0.0.1/32", label: "me" }] },
    });
    assert.equal(res.statusCode, 202);
    await waitCommand(t, user.token, db.id, res.json().command_id, 90_000);
    const from = (source: string) => connect(db.database_url, { from: source }).then((c) => c.end());
    await from("127.0.0.1");
    await from("127.0.0.3"); // the owner's pods
    await assert.rejects(from("127.0.0.2"), /no pg_hba.conf entry/);
    await assert.rejects(from("127.0.0.4"), /no pg_hba.conf entry/, "another owner's pod network");
    // the allowlist as shown stays the customer's own
    const shown = (await call(t.app, { url: `/v1/databases/${db.id}`, token: user.token })).json();
    assert.deepEqual(shown.allowlist, [{ cidr: "127.0.0.1/32", label: "me" }]);

    // the owner gets a new network: the apps area sends the owner-networks job
    apps.nets.set(user.id, ["127.0.0.3/32", "127.0.0.5/32"]);
    await t.platform.jobs.send(OWNER_NETWORKS_JOB, { owner: owner() });
    const joined = await eventually(
      () => connectError({ ...dbTarget(), from: "127.0.0.5" }),
      (e) => e === null,
      90_000,
    );
    assert.equal(joined, null, `the new network was never admitted: ${joined}`);

    // a change no job announced: the reconciler notices the difference and applies it. The sweep passes over an
    // instance with a command open (the next minute's sweep takes it; tests run no schedules), and the command that
    // admitted .5 above is done only after its reload, so the one sweep sent here waits for it to finish
    const openCommands = async () =>
      (
        await t.db.query("SELECT 1 FROM database_commands WHERE database_id = $1 AND status IN ('queued', 'running')", [
          db.id,
        ])
      ).rowCount;
    assert.equal(await eventually(openCommands, (n) => n === 0, 90_000), 0, "the allowlist command never finished");
    apps.nets.set(user.id, ["127.0.0.6/32"]);
    await t.platform.jobs.send("databases.reconcile", {});
    const caught = await eventually(
      () => connectError({ ...dbTarget(), from: "127.0.0.6" }),
      (e) => e === null,
      90_000,
    );
    assert.equal(caught, null, `the reconciler did not apply the owner's networks: ${caught}`);
    await assert.rejects(from("127.0.0.5"), /no pg_hba.conf entry/, "a network the owner no longer has");

    // an empty allowlist admits everyone again
    const open = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${db.id}/allowlist`,
      token: user.token,
      body: { allowlist: [] },
    });
    await waitCommand(t, user.token, db.id, open.json().command_id, 90_000);
    await from("127.0.0.2");
    assert.equal((await t.db.query("SELECT app_cidrs FROM databases WHERE id = $1", [db.id])).rows[0].app_cidrs, null);
  });

  /** The database as a port target, for connectError with a source address. */
  function dbTarget() {
    return { port: db.port, user: db.user, password: db.password, database: db.database };
  }
});
