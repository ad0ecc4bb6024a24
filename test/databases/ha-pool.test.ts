import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, connectError, eventually, fund, onPort, query, waitCommand, waitFor } from "./lib.js";

/**
 * HA, pooling and resize of a `basic` instance through the API, checked on the real servers:
 * the standby has the data, a switchover keeps the URL, PgBouncer pools in transaction mode,
 * a resize changes the server's settings.
 */
describe("databases: HA, pool and resize on a basic instance", { concurrency: false }, () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let db: any;
  let url: string; // database_url with the password, as given at creation
  let pooledUrl: string;
  const post = (path: string, body?: unknown) =>
    call(t.app, { method: "POST", url: `/v1/databases/${db.id}${path}`, token: user.token, body });
  const get = (path: string) => call(t.app, { url: `/v1/databases/${db.id}${path}`, token: user.token });
  const accepted = async (res: Awaited<ReturnType<typeof post>>) => {
    assert.equal(res.statusCode, 202, res.body);
    return waitCommand(t, user.token, db.id, res.json().command_id, 120_000);
  };

  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
    await fund(t, user.id);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "ha-db", size: "basic" },
    });
    assert.equal(res.statusCode, 201, res.body);
    db = res.json();
    url = db.database_url;
    await waitFor(t, user.token, db.id, (d) => d.state === "running");
    await query(url, "CREATE TABLE items (n int PRIMARY KEY)");
    await query(url, "INSERT INTO items SELECT generate_series(1, 3)");
  });
  after(async () => {
    await t?.close();
  });

  test("HA is off at first: GET shows it disabled; rebuild and switchover need it enabled", async () => {
    assert.deepEqual((await get("/ha")).json(), { enabled: false, standby: null });
    expectError(await post("/ha/switchover"), 400, "ha_not_enabled");
    expectError(await post("/ha/rebuild"), 400, "ha_not_enabled");
  });

  test("pool: PUT {enabled:true} gives a pooled URL that works through PgBouncer in transaction mode", async () => {
    const before = (await get("/pool")).json();
    assert.deepEqual(
      [before.enabled, before.pooled_url, before.mode, before.available],
      [false, null, "transaction", true],
    );
    await accepted(
      await call(t.app, {
        method: "PUT",
        url: `/v1/databases/${db.id}/pool`,
        token: user.token,
        body: { enabled: true },
      }),
    );
    const pool = (await get("/pool")).json();
    assert.equal(pool.enabled, true);
    assert.ok(pool.pooled_url, "a pooled URL is shown");
    const pu = new URL(pool.pooled_url);
    assert.equal(pu.password, "", "the pooled URL carries no password");
    assert.equal(pu.username, db.user);
    assert.notEqual(Number(pu.port), db.port, "the pooler has a port of its own");
    assert.equal((await get("")).json().pool_enabled, true);
    pooledUrl = pool.pooled_url;
    const c1 = await connect(pooledUrl, { password: db.password });
    const c2 = await connect(pooledUrl, { password: db.password });
    try {
      const pid1 = (await c1.query("SELECT pg_backend_pid() AS p")).rows[0].p;
      const pid2 = (await c2.query("SELECT pg_backend_pid() AS p")).rows[0].p;
      // transaction mode: with c1 still connected, c2's transaction runs on the same server connection
      assert.equal(pid1, pid2, "two clients share one server connection between transactions");
      assert.equal((await c2.query("SELECT count(*)::int AS n FROM items")).rows[0].n, 3);
      await c1.query("INSERT INTO items VALUES (4)");
    } finally {
      await c1.end();
      await c2.end();
    }
    // the pooler refuses wrong passwords like the server does
    assert.match(
      String((await connectError(pooledUrl, "wrong-password-123"))?.message),
      /password authentication failed|SASL|authentication/i,
    );
  });

  test("POST /ha builds a streaming standby that has the data; GET /ha shows the replication lag", async () => {
    await accepted(await post("/ha"));
    assert.equal((await get("")).json().ha_enabled, true);
    await query(url, "INSERT INTO items VALUES (5)");
    const ha = await eventually(
      async () => (await get("/ha")).json(),
      (h) => h.standby?.streaming === true && h.standby?.lagBytes === 0,
    );
    assert.equal(ha.enabled, true);
    assert.equal(ha.standby.streaming, true, JSON.stringify(ha));
    assert.equal(typeof ha.standby.lagBytes, "number");
    assert.equal(ha.standby.lagBytes, 0, "the standby caught up");
    assert.ok(ha.standby.replayLsn, "the replay position is shown");
    const standbyUrl = onPort(url, ha.standby.port);
    const rows = await eventually(
      () => query(standbyUrl, "SELECT count(*)::int AS n, pg_is_in_recovery() AS r FROM items"),
      (r) => Array.isArray(r) && r[0]?.n === 5,
    );
    assert.deepEqual(rows[0], { n: 5, r: true }, "the standby has every row and is in recovery");
    await assert.rejects(query(standbyUrl, "INSERT INTO items VALUES (100)"), /read-only/);
  });

  test("switchover: the standby becomes primary, the same database_url keeps working and takes writes", async () => {
    const dirBefore = (await query(db.superuser_database_url, "SELECT current_setting('data_directory') AS d"))[0].d;
    const standbyPortBefore = (await get("/ha")).json().standby.port;
    await accepted(await post("/ha/switchover"));
    const now = await query(
      db.superuser_database_url,
      "SELECT current_setting('data_directory') AS d, pg_is_in_recovery() AS r",
    );
    assert.notEqual(now[0].d, dirBefore, "another server answers on the same URL");
    assert.equal(now[0].r, false);
    await query(url, "INSERT INTO items VALUES (6)");
    assert.equal((await query(url, "SELECT count(*)::int AS n FROM items"))[0].n, 6);
    // the pool follows the primary because it targets the front port
    assert.equal((await query(pooledUrl, "SELECT count(*)::int AS n FROM items", [], db.password))[0].n, 6);
    // the old primary is the standby now, streaming the new writes
    const ha = await eventually(
      async () => (await get("/ha")).json(),
      (h) => h.standby?.streaming === true && h.standby?.lagBytes === 0,
    );
    assert.equal(ha.standby.port, standbyPortBefore);
    const onStandby = await eventually(
      () =>
        query(
          onPort(db.superuser_database_url, ha.standby.port),
          "SELECT current_setting('data_directory') AS d, (SELECT count(*)::int FROM items) AS n",
        ),
      (r) => Array.isArray(r) && r[0]?.n === 6,
    );
    assert.deepEqual(onStandby[0], { d: dirBefore, n: 6 });
  });

  test("resize basic → pro applies the size's server settings (max_connections, work_mem) on primary and standby", async () => {
    assert.equal((await query(url, "SHOW max_connections"))[0].max_connections, "100");
    assert.equal((await query(url, "SHOW work_mem"))[0].work_mem, "4MB");
    expectError(await post("/resize", { size: "huge" }), 400, "bad_size");
    expectError(await post("/resize", { size: "pro", storage_gb: 10 }), 400, "invalid_request");
    const after = await accepted(await post("/resize", { size: "pro", storage_gb: 60 }));
    assert.deepEqual([after.size, after.storage_gb], ["pro", 60]);
    assert.equal((await query(url, "SHOW max_connections"))[0].max_connections, "200");
    assert.equal((await query(url, "SHOW work_mem"))[0].work_mem, "8MB");
    const ha = (await get("/ha")).json();
    assert.equal((await query(onPort(url, ha.standby.port), "SHOW max_connections"))[0].max_connections, "200");
    assert.equal((await query(url, "SELECT count(*)::int AS n FROM items"))[0].n, 6, "data survives the restart");
  });

  test("rebuild: a fresh standby copy that streams and has the data", async () => {
    const ha0 = (await get("/ha")).json();
    const startedBefore = (await query(onPort(url, ha0.standby.port), "SELECT pg_postmaster_start_time() AS s"))[0].s;
    await accepted(await post("/ha/rebuild"));
    const ha = await eventually(
      async () => (await get("/ha")).json(),
      (h) => h.standby?.streaming === true,
    );
    assert.equal(ha.standby.streaming, true);
    const sb = onPort(url, ha.standby.port);
    const row = (await query(sb, "SELECT pg_postmaster_start_time() AS s, (SELECT count(*)::int FROM items) AS n"))[0];
    assert.ok(row.s > startedBefore, "the standby server was rebuilt and restarted");
    assert.equal(row.n, 6);
  });

  test("DELETE /ha disables the standby: its server stops, GET shows HA off", async () => {
    const port = (await get("/ha")).json().standby.port;
    const res = await call(t.app, { method: "DELETE", url: `/v1/databases/${db.id}/ha`, token: user.token });
    await accepted(res);
    assert.deepEqual((await get("/ha")).json(), { enabled: false, standby: null });
    assert.equal((await get("")).json().ha_enabled, false);
    assert.match(String((await connectError(onPort(url, port)))?.message), /ECONNREFUSED/);
    assert.equal((await query(url, "SELECT count(*)::int AS n FROM items"))[0].n, 6, "the primary keeps serving");
  });

  test("pool: PUT {enabled:false} stops the pooler; the pooled URL is gone and refuses connections", async () => {
    await accepted(
      await call(t.app, {
        method: "PUT",
        url: `/v1/databases/${db.id}/pool`,
        token: user.token,
        body: { enabled: false },
      }),
    );
    const pool = (await get("/pool")).json();
    assert.deepEqual([pool.enabled, pool.pooled_url], [false, null]);
    assert.match(String((await connectError(pooledUrl, db.password))?.message), /ECONNREFUSED/);
    assert.equal((await query(url, "SELECT count(*)::int AS n FROM items"))[0].n, 6);
  });
});
