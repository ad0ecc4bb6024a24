import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import type { Endpoint } from "../../src/databases/provider/types.js";
import {
  connect,
  connectError,
  eventually,
  expectProviderError,
  query,
  runDetached,
  mainSpec,
  rolesOf,
  tempProvider,
  type ConnectOpts,
} from "./lib.js";

/**
 * The local provider's high availability and pooling on real servers: a streaming standby, switchover (also one
 * killed mid-way), PgBouncer in transaction mode, and both coming back after stop/start.
 */

describe("local database provider: HA and pooling", { concurrency: false }, () => {
  const spec = mainSpec();
  let ep: Endpoint;
  let ownerPassword = spec.password;
  const { owner, superuser } = rolesOf(
    spec,
    () => ep.port,
    () => ownerPassword,
  );
  let dataDir: string;
  let provider: LocalDatabaseProvider;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ dataDir, provider, cleanup } = await tempProvider());
    // what these tests start from: a table of three rows, connections only from 127.0.0.1 (so the pooler has a
    // refused source to check), and a base backup for the WAL continuity checks
    ep = await provider.provision(spec);
    await query(owner(), "CREATE TABLE items (n int PRIMARY KEY)");
    await query(owner(), "INSERT INTO items SELECT generate_series(1, 3)");
    await provider.setAllowlist(spec.id, ["127.0.0.1"]);
    await provider.baseBackup(spec.id);
  });
  after(() => cleanup());

  test("HA: the standby has the data; applySize grows both; switchover keeps the URL working", async () => {
    const st = await provider.enableStandby(spec.id);
    assert.equal(st.streaming, true);
    await query(owner(), "INSERT INTO items VALUES (4)");
    const onStandby = await eventually(
      () => query<{ n: number }>({ ...owner(), port: st.port }, "SELECT count(*)::int AS n FROM items"),
      (rows) => Array.isArray(rows) && rows[0]?.n === 4,
    );
    assert.equal((onStandby as { n: number }[])[0].n, 4);
    const lag = await eventually(
      () => provider.standbyStatus(spec.id),
      (s) => s.lagBytes === 0,
    );
    assert.equal(lag.lagBytes, 0);
    await assert.rejects(query({ ...owner(), port: st.port }, "INSERT INTO items VALUES (5)"), /read-only/);

    await provider.applySize(spec.id, "pro");
    assert.equal((await query<{ max_connections: string }>(owner(), "SHOW max_connections"))[0].max_connections, "200");
    assert.equal((await query<{ work_mem: string }>(owner(), "SHOW work_mem"))[0].work_mem, "8MB");
    assert.equal(
      (await query<{ m: string }>({ ...owner(), port: st.port }, "SELECT current_setting('max_connections') AS m"))[0]
        .m,
      "200",
    );

    const dirBefore = (await query<{ d: string }>(superuser(), "SELECT current_setting('data_directory') AS d"))[0].d;
    await provider.switchover(spec.id);
    const after = await query<{ d: string; r: boolean }>(
      superuser(),
      "SELECT current_setting('data_directory') AS d, pg_is_in_recovery() AS r",
    );
    assert.notEqual(after[0].d, dirBefore, "another data directory now serves the front port");
    assert.equal(after[0].r, false);
    await query(owner(), "INSERT INTO items VALUES (5)");
    assert.equal((await query<{ n: number }>(owner(), "SELECT count(*)::int AS n FROM items"))[0].n, 5);
    const sb = await provider.standbyStatus(spec.id);
    assert.equal(sb.streaming, true);
    const standbyRows = await eventually(
      () =>
        query<{ n: number; d: string }>(
          { ...superuser(), port: sb.port },
          "SELECT (SELECT count(*)::int FROM items) AS n, current_setting('data_directory') AS d",
        ),
      (rows) => Array.isArray(rows) && rows[0]?.n === 5,
    );
    assert.deepEqual((standbyRows as { n: number; d: string }[])[0], { n: 5, d: dirBefore });
    const wc = await provider.walContinuity(spec.id);
    assert.equal(wc.ok, true, `continuity across the timeline switch: ${JSON.stringify(wc)}`);
    assert.equal(wc.timeline, 2);
  });

  test("pool: transaction-mode PgBouncer URL shares server connections, follows allowlist and rotation", async () => {
    const status = await provider.enablePool(spec.id);
    assert.equal(status.running, true);
    const pooled = (extra: Partial<ConnectOpts> = {}) => owner({ port: status.endpoint!.port, ...extra });
    const c1 = await connect(pooled());
    const c2 = await connect(pooled());
    try {
      const p1 = (await c1.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      const p2 = (await c2.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      // in session mode c2 could not get c1's server connection while c1 stays connected
      assert.equal(p1, p2);
      assert.equal((await c2.query<{ n: number }>("SELECT count(*)::int AS n FROM items")).rows[0].n, 5);
      // the client side of the pooler is TLS (the server behind it only sees PgBouncer's Unix socket)
      assert.equal(
        (c1 as unknown as { connection: { stream: { encrypted?: boolean } } }).connection.stream.encrypted,
        true,
      );
    } finally {
      await c1.end();
      await c2.end();
    }
    const denied = await connectError(pooled({ from: "127.0.0.2" }));
    assert.match(String(denied?.message), /pg_hba|not allowed|rejected|no such user|login rejected/i);
    await provider.rotatePassword(spec.id, "owner", "third-password-3");
    const oldPw = await connectError(pooled());
    assert.match(String(oldPw?.message), /password authentication failed|SASL|authentication/i);
    ownerPassword = "third-password-3";
    assert.equal(await connectError(pooled()), null);
  });

  test("stop: new connections fail; start: primary, standby and pool back with the data", async () => {
    await provider.stop(spec.id);
    const st = await provider.status(spec.id);
    assert.equal(st.running, false);
    assert.match(String((await connectError(owner()))?.message), /ECONNREFUSED/);
    await expectProviderError(provider.snapshot(spec.id), "not_running");
    await provider.start(spec.id);
    assert.equal((await query<{ n: number }>(owner(), "SELECT count(*)::int AS n FROM items"))[0].n, 5);
    const again = await provider.status(spec.id);
    assert.equal(again.standby?.running, true);
    assert.equal(again.pool?.running, true);
    assert.equal(await connectError(owner({ port: again.pool!.endpoint!.port })), null);
  });

  test("a switchover killed mid-way is finished by start(): URL works, roles swapped, standby streaming", async () => {
    const recordFile = path.join(dataDir, "instances", spec.id, "instance.json");
    const dirBefore = (await query<{ d: string }>(superuser(), "SELECT current_setting('data_directory') AS d"))[0].d;
    const child = runDetached(
      `await new LocalDatabaseProvider({ dataDir: ${JSON.stringify(dataDir)} }).switchover(${JSON.stringify(spec.id)});`,
    );
    const seen = await eventually(
      async () => (await readFile(recordFile, "utf8")).includes('"phase": "promoting"'),
      (v) => v === true,
      60_000,
    );
    await child.kill();
    assert.equal(seen, true, `never saw the promoting phase: ${child.output()}`);
    assert.equal((await provider.status(spec.id)).pendingSwitchover, true);
    await provider.start(spec.id);
    const st = await provider.status(spec.id);
    assert.equal(st.pendingSwitchover, false);
    assert.equal(st.standby?.streaming, true);
    const now = await query<{ d: string; r: boolean; n: number }>(
      superuser(),
      "SELECT current_setting('data_directory') AS d, pg_is_in_recovery() AS r, (SELECT count(*)::int FROM items) AS n",
    );
    assert.deepEqual([now[0].r, now[0].n], [false, 5]);
    assert.notEqual(now[0].d, dirBefore);
    await query(owner(), "INSERT INTO items VALUES (6)");
    await query(owner(), "DELETE FROM items WHERE n = 6");
  });

  test("pool and standby can be disabled again", async () => {
    await provider.disablePool(spec.id);
    await provider.disableStandby(spec.id);
    assert.equal((await provider.status(spec.id)).standby, null);
  });
});
