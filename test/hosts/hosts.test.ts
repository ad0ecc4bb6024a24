import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConfigError } from "../../src/config/config.js";
import { hostsConfig, loadHostId, type HostRegistry } from "../../src/hosts/service.js";
import { adoptUnplaced } from "../../src/databases/placement.js";
import { call, createTestApp, expectError, OPERATOR_TOKEN, signup, type TestApp } from "../helpers/app.js";

describe("host settings and identity", () => {
  test("ROLES, HOST_NAME and the heartbeat settings are checked; the default runs every role", () => {
    const d = hostsConfig({});
    assert.deepEqual(d.roles, ["api", "worker", "edge", "s3"]);
    assert.equal(d.heartbeatSeconds, 5);
    assert.equal(d.missedBeats, 3);
    assert.deepEqual(hostsConfig({ ROLES: "worker, api" }).roles, ["api", "worker"]);
    for (const [name, value] of [
      ["ROLES", "api,gpu"],
      ["ROLES", ","],
      ["HOST_HEARTBEAT_SECONDS", "0"],
      ["HOST_MISSED_BEATS", "x"],
      ["HOST_NAME", "bad name"],
    ]) {
      assert.throws(
        () => hostsConfig({ [name]: value }),
        (e: Error) => e instanceof ConfigError && e.message.includes(name),
        name,
      );
    }
  });

  test("the host id is created once in DATA_DIR and read back after a restart", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "host-id-"));
    try {
      const first = await loadHostId(path.join(dir, "data"));
      assert.equal(await loadHostId(path.join(dir, "data")), first);
      const [a, b] = await Promise.all([loadHostId(path.join(dir, "race")), loadHostId(path.join(dir, "race"))]);
      assert.equal(a, b, "two processes starting together agree");
      writeFileSync(path.join(dir, "bad"), "");
      await assert.rejects(loadHostId(dir).then(() => loadHostId(path.join(dir, "bad"))));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("hosts in one process", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let hostId: string;
  before(async () => {
    t = await createTestApp();
    user = await signup(t.app);
    hostId = t.platform.kernel.require("hosts").local.id;
  });
  after(async () => {
    await t.close();
  });

  test("GET /v1/operator/hosts lists this host with its roles, capacity and a fresh heartbeat; users are refused", async () => {
    const res = await call(t.app, { url: "/v1/operator/hosts", token: OPERATOR_TOKEN });
    assert.equal(res.statusCode, 200);
    const [h] = res.json();
    assert.equal(h.id, hostId);
    assert.equal(h.local, true);
    assert.equal(h.available, true);
    assert.deepEqual(h.roles, ["api", "worker", "edge", "s3"]);
    assert.ok(h.capacity.cpus >= 1);
    expectError(await call(t.app, { url: "/v1/operator/hosts", token: user.token }), 401);
  });

  test("a new database is placed on the local host; its commands wait with host_unavailable while its host has no heartbeat", async () => {
    const created = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "placed" },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id;
    assert.equal((await t.db.query("SELECT host_id FROM databases WHERE id = $1", [id])).rows[0].host_id, hostId);

    // another host that stopped beating an hour ago holds it now (as if created there)
    const gone = randomUUID();
    await t.db.query(
      "INSERT INTO hosts (id, name, roles, heartbeat_seconds, last_heartbeat_at) VALUES ($1, 'gone', '{api,worker}', 5, now() - interval '1 hour')",
      [gone],
    );
    await t.db.query("UPDATE databases SET host_id = $2, state = 'running' WHERE id = $1", [id, gone]);
    const stop = await call(t.app, { method: "POST", url: `/v1/databases/${id}/stop`, token: user.token });
    assert.equal(stop.statusCode, 202);
    const cmd = (await call(t.app, { url: `/v1/databases/${id}`, token: user.token }))
      .json()
      .commands.find((c: any) => c.id === stop.json().command_id);
    assert.equal(cmd.status, "queued");
    assert.match(cmd.error, /^host_unavailable/);

    const started = Date.now();
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token: user.token }),
      503,
      "host_unavailable",
    );
    assert.ok(Date.now() - started < 2000, "refused at once, not after a wait");
    const rotations = await t.db.query(
      "SELECT 1 FROM database_commands WHERE database_id = $1 AND kind = 'rotate_password'",
      [id],
    );
    assert.equal(rotations.rowCount, 0, "nothing recorded that could apply later");
    const listed = (await call(t.app, { url: "/v1/operator/hosts", token: OPERATOR_TOKEN }))
      .json()
      .find((h: any) => h.id === gone);
    assert.equal(listed.available, false);
    await t.db.query("UPDATE databases SET host_id = $2 WHERE id = $1", [id, hostId]);
  });

  test("instances from before hosts existed are adopted only by the host holding their files", async () => {
    const created = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "legacy" },
    });
    const here = created.json().id;
    const elsewhere = randomUUID();
    await t.db.query(
      `INSERT INTO databases (id, account_id, owner_kind, owner_id, name, slug, version, size, storage_gb, pitr_retention_days, desired_state, state, db_name, db_user)
       VALUES ($1, $2, 'account', $2, 'other', 'other-host-db', 17, 'dev', 10, 7, 'running', 'running', 'other', 'other')`,
      [elsewhere, user.id],
    );
    await t.db.query("UPDATE databases SET host_id = NULL WHERE id = ANY($1)", [[here, elsewhere]]);
    const adopted = await adoptUnplaced(t.db, t.databases, hostId);
    assert.deepEqual(adopted, [here]);
    const { rows } = await t.db.query<{ id: string; host_id: string | null }>(
      "SELECT id, host_id FROM databases WHERE id = ANY($1)",
      [[here, elsewhere]],
    );
    assert.equal(rows.find((r) => r.id === elsewhere)!.host_id, null);
    await t.db.query("DELETE FROM databases WHERE id = $1", [elsewhere]);
  });

  test("a running Idempotency-Key whose process is dead is taken over at once", async () => {
    await t.platform.state<HostRegistry>("hosts").startLease();
    const body = { name: "after-a-crash", scopes: ["databases:read"] };
    const url = "/v1/api-keys";
    const hash = createHash("sha256")
      .update("POST")
      .update("\0")
      .update(url)
      .update("\0")
      .update(JSON.stringify(body))
      .digest("hex");
    // what a process killed mid-request leaves: a running key, locked for another minute, owned by a process holding no lease
    await t.db.query(
      `INSERT INTO idempotency_keys (owner, key, request_hash, state, locked_until, process_id) VALUES ($1, 'cut', $2, 'running', now() + interval '1 minute', $3)`,
      [`acct:${user.id}`, hash, randomUUID()],
    );
    const started = Date.now();
    const res = await call(t.app, {
      method: "POST",
      url,
      token: user.token,
      body,
      headers: { "idempotency-key": "cut" },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);
    const row = (
      await t.db.query("SELECT state, process_id FROM idempotency_keys WHERE owner = $1 AND key = 'cut'", [
        `acct:${user.id}`,
      ])
    ).rows[0];
    assert.equal(row.state, "done");
    assert.equal(row.process_id, t.platform.kernel.require("hosts").leaseId());
  });
});

describe("an API-only process (ROLES=api)", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  before(async () => {
    t = await createTestApp({ env: { ROLES: "api" } });
    user = await signup(t.app);
  });
  after(async () => {
    await t.close();
  });

  test("creation needs an available worker host: refused when none, and forgotten when the chosen one goes quiet before reserving", async () => {
    expectError(
      await call(t.app, { method: "POST", url: "/v1/databases", token: user.token, body: { name: "nowhere" } }),
      503,
      "host_unavailable",
    );
    assert.equal((await t.db.query("SELECT 1 FROM databases")).rowCount, 0);

    // a worker host that beats every second, then stops beating: its reservation never comes
    const worker = randomUUID();
    await t.db.query(
      "INSERT INTO hosts (id, name, roles, heartbeat_seconds) VALUES ($1, 'quiet-worker', '{worker}', 1)",
      [worker],
    );
    const started = Date.now();
    expectError(
      await call(t.app, { method: "POST", url: "/v1/databases", token: user.token, body: { name: "elsewhere" } }),
      503,
      "host_unavailable",
    );
    assert.ok(Date.now() - started < 10_000);
    assert.equal((await t.db.query("SELECT 1 FROM databases")).rowCount, 0, "nothing left behind with its slug taken");
    const listed = (await call(t.app, { url: "/v1/operator/hosts", token: OPERATOR_TOKEN })).json();
    assert.deepEqual(listed.find((h: any) => h.local).roles, ["api"]);
  });
});
