import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import type { Endpoint } from "../../src/databases/provider/types.js";
import { connect, connectError, expectProviderError, query, mainSpec, rolesOf, tempProvider } from "./lib.js";
import { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";

/**
 * Real servers, real clients: every assertion goes through a PostgreSQL server started by the
 * provider and a node-postgres connection (over TLS, from a chosen loopback source address).
 * This file: provisioning, access (TLS, allowlist, passwords), extensions, storage quota, capacity.
 * Backups, HA/pooling and crash recovery have provider-local-*.test.ts files of their own.
 */

describe("local database provider: provisioning, access and limits", { concurrency: false }, () => {
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
  });
  after(() => cleanup());

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

  test("capacity and missing PgBouncer give typed errors", async () => {
    const limited = new LocalDatabaseProvider({ dataDir, maxInstances: 1 });
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
