import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, open, readdir, readFile, rename, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import { isProviderError, type Endpoint, type InstanceSpec } from "../../src/databases/provider/types.js";

/**
 * Real servers, real clients: every assertion goes through a PostgreSQL server started by the
 * provider and a node-postgres connection (over TLS, from a chosen loopback source address).
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ConnectOpts {
  port: number;
  user: string;
  password: string;
  database: string;
  ssl?: boolean;
  /** Source address of the TCP connection (node-postgres has no option for it: a pre-made socket does it). */
  from?: string;
}

function client(o: ConnectOpts): pg.Client {
  let stream: (() => net.Socket) | undefined;
  if (o.from) {
    stream = () => {
      const sock = new net.Socket();
      const connect = sock.connect.bind(sock) as (opts: net.TcpSocketConnectOpts) => net.Socket;
      (sock as unknown as { connect: (port: number, host: string) => net.Socket }).connect = (port, host) =>
        connect({ port, host, localAddress: o.from });
      return sock;
    };
  }
  const c = new pg.Client({
    host: "127.0.0.1",
    port: o.port,
    user: o.user,
    password: o.password,
    database: o.database,
    ssl: o.ssl === false ? false : { rejectUnauthorized: false },
    stream,
    connectionTimeoutMillis: 10_000,
  });
  c.on("error", () => {}); // terminated sessions surface through the failing query instead
  return c;
}

async function connect(o: ConnectOpts): Promise<pg.Client> {
  const c = client(o);
  await c.connect();
  return c;
}

/** The error a connection attempt ends with, or null when it succeeds. */
async function connectError(o: ConnectOpts): Promise<Error | null> {
  const c = client(o);
  try {
    await c.connect();
    await c.query("SELECT 1");
    return null;
  } catch (err) {
    return err as Error;
  } finally {
    await c.end().catch(() => {});
  }
}

async function query<T extends pg.QueryResultRow>(o: ConnectOpts, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = await connect(o);
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

async function expectProviderError(p: Promise<unknown>, code: string): Promise<Error> {
  try {
    await p;
  } catch (err) {
    assert.ok(isProviderError(err), `expected a ProviderError, got ${(err as Error).stack}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ProviderError ${code}, but the call succeeded`);
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await fn().catch((e) => e as T);
    if (ok(last)) return last;
    if (Date.now() > deadline) return last;
    await sleep(100);
  }
}

/** Runs provider code in a child process of its own group, so a test can kill -9 it (and its pg_ctl/initdb) mid-way. */
function runDetached(body: string): { kill: () => Promise<void>; output: () => string } {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `
    import { LocalDatabaseProvider } from ${JSON.stringify(path.resolve("src/databases/provider/local/index.ts"))};
    ${body}
    console.log("finished");`,
    ],
    { detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("exit", r));
  return {
    kill: async () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
      await exited;
    },
    output: () => out,
  };
}

describe("local database provider", { concurrency: false }, () => {
  let tmp: string;
  let dataDir: string;
  let provider: LocalDatabaseProvider;
  const spec: InstanceSpec = {
    id: "main-db",
    version: 17,
    size: "basic",
    storageGb: 10,
    database: "shop",
    user: "shop_owner",
    password: "first-password-1",
    superuserPassword: "super-password-1",
    hostnames: ["shop.db.example.test"],
  };
  let ep: Endpoint;
  let ownerPassword = spec.password;
  const superPassword = spec.superuserPassword;
  const owner = (extra: Partial<ConnectOpts> = {}): ConnectOpts => ({
    port: ep.port,
    user: spec.user,
    password: ownerPassword,
    database: spec.database,
    ...extra,
  });
  const superuser = (extra: Partial<ConnectOpts> = {}): ConnectOpts => ({
    port: ep.port,
    user: "postgres",
    password: superPassword,
    database: spec.database,
    ...extra,
  });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "provider-local-"));
    await chmod(tmp, 0o755); // the servers run as an unprivileged user that must reach their directories
    dataDir = path.join(tmp, "data");
    provider = new LocalDatabaseProvider({ dataDir });
  });

  after(async () => {
    const ids = existsSync(path.join(dataDir, "instances")) ? await readdir(path.join(dataDir, "instances")) : [];
    for (const id of ids) await provider.purge(id).catch((e) => console.error(`purge ${id}:`, e));
    await rm(tmp, { recursive: true, force: true });
  });

  test("provision: a running server reachable with sslmode=require; plain TCP refused", async () => {
    ep = await provider.provision(spec);
    assert.equal(ep.host, "127.0.0.1");
    assert.equal(ep.database, "shop");
    const rows = await query<{ ssl: boolean; owner: string; v: string }>(
      owner(),
      `SELECT s.ssl, pg_get_userbyid(d.datdba) AS owner, current_setting('server_version_num') AS v
         FROM pg_stat_ssl s, pg_database d WHERE s.pid = pg_backend_pid() AND d.datname = current_database()`,
    );
    assert.deepEqual([rows[0].ssl, rows[0].owner, rows[0].v.slice(0, 2)], [true, "shop_owner", "17"]);
    const plain = await connectError(owner({ ssl: false }));
    assert.match(String(plain?.message), /no pg_hba\.conf entry|SSL/i);
    // the customer's admin role manages roles and reads everything, but cannot reach the host (tenants share an OS user)
    const admin = await query<{ s: boolean; r: boolean; db: boolean }>(
      superuser(),
      "SELECT rolsuper AS s, rolcreaterole AS r, rolcreatedb AS db FROM pg_roles WHERE rolname = current_user",
    );
    assert.deepEqual(admin[0], { s: false, r: true, db: true });
    await assert.rejects(
      query(superuser(), "COPY (SELECT 1) TO PROGRAM 'true'"),
      /permission denied|must be superuser|privileges/i,
    );
    await assert.rejects(query(superuser(), "SELECT pg_read_file('postgresql.conf')"), /permission denied/);
    await query(superuser(), "CREATE ROLE reporting LOGIN PASSWORD 'reporting-pw-1'");
    // a second provision is a no-op that keeps everything as it is
    assert.deepEqual(await provider.provision({ ...spec, password: "another-password" }), ep);
    assert.equal(await connectError(owner()), null);
    const st = await provider.status(spec.id);
    assert.equal(st.running, true);
    assert.ok(st.diskUsageBytes > 10 * 2 ** 20, `disk usage ${st.diskUsageBytes}`);
  });

  test("extensions: defaults installed, allow-listed added, unknown and disallowed refused", async () => {
    const installed = await provider.ensureExtensions(spec.id, ["citext", "pg_stat_statements"]);
    for (const e of ["pgcrypto", "uuid-ossp", "citext", "pg_stat_statements"])
      assert.ok(installed.includes(e), `${e} in ${installed}`);
    const rows = await query<{ u: string; n: string }>(
      owner(),
      "SELECT gen_random_uuid()::text AS u, (SELECT count(*) FROM pg_stat_statements)::text AS n",
    );
    assert.match(rows[0].u, /^[0-9a-f-]{36}$/);
    const unknown = await expectProviderError(
      provider.ensureExtensions(spec.id, ["no_such_ext", "citext"]),
      "extension_not_allowed",
    );
    assert.match(unknown.message, /unknown.*no_such_ext/);
    await expectProviderError(provider.ensureExtensions(spec.id, ["postgres_fdw"]), "extension_not_allowed");
    await expectProviderError(
      provider.ensureExtensions(spec.id, ["pg_stat_statements"], { shared: true }),
      "extension_not_allowed",
    );
  });

  test("allowlist: a denied source address is refused, an allowed one connects; empty allows all", async () => {
    assert.equal(await connectError(owner({ from: "127.0.0.2" })), null, "everyone allowed before");
    await provider.setAllowlist(spec.id, ["127.0.0.1/32"]);
    const denied = await connectError(owner({ from: "127.0.0.2" }));
    assert.match(String(denied?.message), /no pg_hba\.conf entry for host "127\.0\.0\.2"/);
    assert.equal(await connectError(owner({ from: "127.0.0.1" })), null);
    await expectProviderError(provider.setAllowlist(spec.id, ["10.0.0.0/33"]), "bad_cidr");
    // the platform's own apps (always-allowed CIDRs of the provider) get in whatever the customer lists
    const withPlatformApps = new LocalDatabaseProvider({ dataDir, alwaysAllowedCidrs: ["127.0.0.2/32"] });
    await withPlatformApps.setAllowlist(spec.id, ["127.0.0.1/32"]);
    assert.equal(await connectError(owner({ from: "127.0.0.2" })), null);
    assert.match(String((await connectError(owner({ from: "127.0.0.3" })))?.message), /no pg_hba\.conf entry/);
    await provider.setAllowlist(spec.id, []);
    assert.equal(await connectError(owner({ from: "127.0.0.2" })), null);
    await provider.setAllowlist(spec.id, ["127.0.0.1"]); // the pool test below relies on this
  });

  test("rotate password: old password refused at once, its open session ended, new one works", async () => {
    const old = await connect(owner());
    await old.query("CREATE TABLE items (n int PRIMARY KEY)");
    await old.query("INSERT INTO items SELECT generate_series(1, 3)");
    await provider.rotatePassword(spec.id, "owner", "second-password-2");
    await assert.rejects(old.query("SELECT 1"));
    await old.end().catch(() => {});
    const refused = await connectError(owner());
    assert.match(String(refused?.message), /password authentication failed/);
    ownerPassword = "second-password-2";
    const rows = await query<{ n: number }>(owner(), "SELECT count(*)::int AS n FROM items");
    assert.equal(rows[0].n, 3);
  });

  test("storage quota: over quota the instance turns read-only with a reason, even for open sessions", async () => {
    const session = await connect(owner());
    try {
      const st = await provider.setStorageQuota(spec.id, 0.01); // ~10 MB: a fresh cluster is larger
      assert.ok(st.usageBytes > st.quotaBytes);
      assert.match(String(st.readOnly?.reason), /storage quota exceeded/);
      assert.match(String((await provider.status(spec.id)).readOnly?.reason), /storage quota exceeded/);
      await assert.rejects(session.query("INSERT INTO items VALUES (100)"), /read-only transaction/);
      await assert.rejects(query(owner(), "INSERT INTO items VALUES (100)"), /read-only transaction/);
      const back = await provider.setStorageQuota(spec.id, 10);
      assert.equal(back.readOnly, null);
      await session.query("INSERT INTO items VALUES (100)");
      await session.query("DELETE FROM items WHERE n = 100");
      assert.equal((await provider.status(spec.id)).readOnly, null);
    } finally {
      await session.end();
    }
  });

  test("PITR: recovering a copy to a noted time finds exactly the rows written before it", async () => {
    await provider.baseBackup(spec.id);
    await query(owner(), "CREATE TABLE pitr (n int)");
    await query(owner(), "INSERT INTO pitr SELECT generate_series(1, 5)");
    await sleep(300);
    const noted = new Date();
    await sleep(300);
    await query(owner(), "INSERT INTO pitr SELECT generate_series(6, 10)");
    const result = await provider.recoverTo(spec.id, { targetTime: noted, intoId: "main-db-pitr" });
    assert.notEqual(result.endpoint.port, ep.port);
    assert.ok(result.timeline >= 2, `promoted onto a new timeline, got ${result.timeline}`);
    const copy = { port: result.endpoint.port, user: spec.user, password: ownerPassword, database: spec.database };
    const rows = await query<{ n: number }>(copy, "SELECT n FROM pitr ORDER BY n");
    assert.deepEqual(
      rows.map((r) => r.n),
      [1, 2, 3, 4, 5],
    );
    // the copy is a writable primary of its own; the source kept all ten rows
    await query(copy, "INSERT INTO pitr VALUES (99)");
    assert.equal((await query<{ n: number }>(owner(), "SELECT count(*)::int AS n FROM pitr"))[0].n, 10);
    await provider.purge("main-db-pitr");
  });

  test("snapshot: labelled, checksummed; verifyBackup detects a corrupted file", async () => {
    const snap = await provider.snapshot(spec.id, "before-migration");
    assert.equal(snap.kind, "snapshot");
    assert.equal(snap.label, "before-migration");
    assert.ok(snap.sizeBytes > 10 * 2 ** 20);
    assert.ok(snap.manifestPath && existsSync(snap.manifestPath));
    assert.match(snap.startLsn, /^[0-9A-F]+\/[0-9A-F]+$/);
    assert.ok(new Date(snap.finishedAt) >= new Date(snap.startedAt));
    const good = await provider.verifyBackup(spec.id, snap.id);
    assert.equal(good.ok, true, JSON.stringify(good));
    assert.ok(good.checkedFiles > 100);
    const listed = await provider.listBackups(spec.id);
    assert.ok(listed.some((b) => b.id === snap.id && b.kind === "snapshot"));
    // flip one byte of a catalog file
    const victim = "global/pg_control";
    const fh = await open(path.join(snap.path, "data", victim), "r+");
    const buf = Buffer.alloc(1);
    await fh.read(buf, 0, 1, 100);
    buf[0] ^= 0xff;
    await fh.write(buf, 0, 1, 100);
    await fh.close();
    const bad = await provider.verifyBackup(spec.id, snap.id);
    assert.equal(bad.ok, false);
    assert.deepEqual(bad.mismatched, [victim]);
  });

  test("WAL continuity: complete since the last base backup; a missing archived segment is found", async () => {
    const wc = await provider.walContinuity(spec.id);
    assert.equal(wc.ok, true, JSON.stringify(wc));
    assert.ok(wc.checkedSegments >= 1 && wc.fromSegment);
    const wal = await provider.listArchivedWal(spec.id);
    assert.ok(wal.length >= 2 && wal.every((w) => w.kind === "wal" && w.sizeBytes === 16 * 2 ** 20));
    const archived = path.join(dataDir, "backups", spec.id, "wal", wc.fromSegment!);
    await rename(archived, `${archived}.hidden`);
    try {
      const broken = await provider.walContinuity(spec.id);
      assert.equal(broken.ok, false);
      assert.deepEqual(broken.missing, [wc.fromSegment]);
      assert.match(String(broken.problem), /missing/);
    } finally {
      await rename(`${archived}.hidden`, archived);
    }
  });

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

  test("retention: pruning keeps the newest backup before the window and the WAL from it on", async () => {
    const before = await provider.listBackups(spec.id);
    assert.ok(before.length >= 2);
    const later = new Date(Date.now() + 10 * 86_400_000);
    const res = await provider.pruneBackups(spec.id, 7, later);
    const remaining = await provider.listBackups(spec.id);
    assert.deepEqual(
      remaining.map((b) => b.id),
      [before[before.length - 1].id],
    );
    assert.equal(res.removedBackups.length, before.length - 1);
    assert.ok(res.removedWal >= 1);
    await provider.disablePool(spec.id);
    await provider.disableStandby(spec.id);
    assert.equal((await provider.status(spec.id)).standby, null);
  });

  test("provision survives being killed mid-way (twice) and reaches running; dev is shared (v16)", async () => {
    const devSpec: InstanceSpec = {
      id: "crashy",
      version: 16,
      size: "dev",
      storageGb: 10,
      database: "app",
      user: "app_user",
      password: "dev-password-1",
      superuserPassword: "dev-super-1",
    };
    const nodeDir = path.join(dataDir, "instances", devSpec.id, "nodes", "a");
    // kill -9 of the whole process group once initdb has begun, then once the server is starting
    for (const marker of ["PG_VERSION", "postmaster.pid"]) {
      const child = runDetached(
        `await new LocalDatabaseProvider({ dataDir: ${JSON.stringify(dataDir)} }).provision(${JSON.stringify(devSpec)});`,
      );
      const seen = await eventually(
        async () => existsSync(path.join(nodeDir, marker)),
        (v) => v,
        60_000,
      );
      await child.kill();
      assert.equal(seen, true, `marker ${marker} never appeared: ${child.output()}`);
      assert.doesNotMatch(child.output(), /finished/, "the child was killed before finishing");
    }
    assert.equal((await provider.status(devSpec.id)).provisioned, false);
    const devEp = await provider.provision(devSpec);
    const rows = await query<{ v: string; db: string }>(
      { port: devEp.port, user: devSpec.user, password: devSpec.password, database: devSpec.database },
      "SELECT current_setting('server_version_num') AS v, current_database() AS db",
    );
    assert.equal(rows[0].v.slice(0, 2), "16");
    assert.equal(rows[0].db, "app");
    assert.equal(
      (
        await query<{ m: string }>(
          { port: devEp.port, user: "postgres", password: devSpec.superuserPassword, database: "app" },
          "SELECT current_setting('max_connections') AS m",
        )
      )[0].m,
      "25",
    );
    await expectProviderError(provider.ensureExtensions(devSpec.id, ["pg_stat_statements"]), "extension_not_allowed");
    await expectProviderError(provider.enableStandby(devSpec.id), "ha_not_supported");
  });

  test("in-place PITR brings a removed instance back on its own URL, as of the target time", async () => {
    const dev = {
      port: (await provider.endpoint("crashy")).port,
      user: "app_user",
      password: "dev-password-1",
      database: "app",
    };
    await provider.baseBackup("crashy");
    await query(dev, "CREATE TABLE notes (n int)");
    await query(dev, "INSERT INTO notes VALUES (1), (2)");
    await sleep(300);
    const noted = new Date();
    await sleep(300);
    await query(dev, "INSERT INTO notes VALUES (3)");
    await provider.remove("crashy");
    const removed = await provider.status("crashy");
    assert.deepEqual([removed.removed, removed.running], [true, false]);
    const res = await provider.recoverTo("crashy", { targetTime: noted });
    assert.equal(res.endpoint.port, dev.port);
    assert.deepEqual(
      (await query<{ n: number }>(dev, "SELECT n FROM notes ORDER BY n")).map((r) => r.n),
      [1, 2],
    );
    const st = await provider.status("crashy");
    assert.deepEqual([st.removed, st.running], [false, true]);
    assert.equal(st.walContinuity?.ok, true, JSON.stringify(st.walContinuity));
  });

  test("capacity and missing PgBouncer give typed errors", async () => {
    const limited = new LocalDatabaseProvider({ dataDir, maxInstances: 2 });
    await expectProviderError(limited.reserve({ ...spec, id: "one-too-many" }), "capacity");
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const noPorts = new LocalDatabaseProvider({ dataDir, portRange: [port, port] });
      await expectProviderError(noPorts.reserve({ ...spec, id: "no-port" }), "capacity");
    } finally {
      blocker.close();
    }
    const noBouncer = new LocalDatabaseProvider({ dataDir, pgbouncerPath: "/nonexistent/pgbouncer" });
    const err = await expectProviderError(noBouncer.enablePool(spec.id), "pgbouncer_missing");
    assert.match(err.message, /PgBouncer is not installed/);
    assert.equal((await noBouncer.poolStatus(spec.id)).available, false);
  });
});
