import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import type { InstanceSpec } from "../../src/databases/provider/types.js";

/**
 * A password rotation ends every session that logged in with the old password, also those held
 * through PgBouncer: pooled clients stay connected to the pooler, which would otherwise keep serving
 * them with fresh server connections once anyone logs in with the new password.
 */

interface ConnectOpts {
  port: number;
  user: string;
  password: string;
  database: string;
}

function client(o: ConnectOpts): pg.Client {
  const c = new pg.Client({
    host: "127.0.0.1",
    ...o,
    ssl: { rejectUnauthorized: false },
    connectionTimeoutMillis: 10_000,
  });
  c.on("error", () => {}); // a terminated session surfaces through its next query
  return c;
}

async function connect(o: ConnectOpts): Promise<pg.Client> {
  const c = client(o);
  await c.connect();
  return c;
}

/** The error a connection attempt (and one query) ends with, or null when it works. */
async function connectError(o: ConnectOpts): Promise<Error | null> {
  let c: pg.Client | undefined;
  try {
    c = await connect(o);
    await c.query("SELECT 1");
    return null;
  } catch (err) {
    return err as Error;
  } finally {
    await c?.end().catch(() => {});
  }
}

describe("password rotation with a connection pool", { concurrency: false }, () => {
  let tmp: string;
  let dataDir: string;
  let provider: LocalDatabaseProvider;
  const spec: InstanceSpec = {
    id: "rotation-db",
    version: 17,
    size: "basic",
    storageGb: 1,
    database: "app",
    user: "app_owner",
    password: "old-password-1",
    superuserPassword: "super-password-1",
  };
  let directPort: number;
  let standbyPort: number;
  let poolPort: number;
  const as = (port: number, password: string, database = spec.database, user = spec.user): ConnectOpts => ({
    port,
    user,
    password,
    database,
  });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "pool-rotation-"));
    await chmod(tmp, 0o755); // the servers run as an unprivileged user that must reach their directories
    dataDir = path.join(tmp, "data");
    provider = new LocalDatabaseProvider({ dataDir, spareClusters: 0 });
    directPort = (await provider.provision(spec)).port;
    const standby = await provider.enableStandby(spec.id); // a size with HA, so the standby's sessions are covered too
    assert.equal(standby.streaming, true);
    standbyPort = standby.port;
    const pool = await provider.enablePool(spec.id);
    assert.equal(pool.running, true);
    poolPort = pool.endpoint!.port;
  });

  after(async () => {
    const ids = existsSync(path.join(dataDir, "instances")) ? await readdir(path.join(dataDir, "instances")) : [];
    for (const id of ids) await provider.purge(id).catch((e) => console.error(`purge ${id}:`, e));
    await rm(tmp, { recursive: true, force: true });
  });

  test("rotate: pooled, direct and standby sessions of the old password end; old password refused, new one works through the pool at once", async () => {
    const held = {
      pooledIdle: await connect(as(poolPort, spec.password)),
      pooledInTransaction: await connect(as(poolPort, spec.password)),
      // the role can reach every database of the instance through the pool, not only its own
      pooledOtherDatabase: await connect(as(poolPort, spec.password, "postgres")),
      direct: await connect(as(directPort, spec.password)),
      standby: await connect(as(standbyPort, spec.password)),
    };
    try {
      for (const c of Object.values(held)) assert.equal((await c.query("SELECT 1 AS one")).rows[0].one, 1);
      await held.pooledInTransaction.query("BEGIN");
      await held.pooledInTransaction.query("SELECT txid_current()");

      await provider.rotatePassword(spec.id, "owner", "new-password-2");

      // logging in with the new password first: PgBouncer then holds working SCRAM keys for the role,
      // which is what let sessions of the old password carry on before
      assert.equal(await connectError(as(poolPort, "new-password-2")), null, "new password through the pool");
      assert.equal(
        await connectError(as(poolPort, "new-password-2", "postgres")),
        null,
        "new password, other database",
      );
      assert.equal(await connectError(as(directPort, "new-password-2")), null, "new password direct");
      assert.equal(await connectError(as(standbyPort, "new-password-2")), null, "new password on the standby");

      for (const [name, c] of Object.entries(held)) {
        await assert.rejects(
          c.query("SELECT 1"),
          (err: Error) => {
            assert.match(
              err.message,
              /terminat|closed|not queryable|database removed|connection/i,
              `${name}: ${err.message}`,
            );
            return true;
          },
          `${name} still works after the rotation`,
        );
      }

      for (const o of [
        as(poolPort, spec.password),
        as(poolPort, spec.password, "postgres"),
        as(directPort, spec.password),
        as(standbyPort, spec.password),
      ]) {
        const err = await connectError(o);
        assert.match(
          String(err?.message),
          /password authentication failed|SASL|authentication/i,
          `old password on port ${o.port}/${o.database}`,
        );
      }
    } finally {
      for (const c of Object.values(held)) await c.end().catch(() => {});
    }
  });

  test("rotating a role with nothing in the pool leaves the pool alone; with sessions there, they end", async () => {
    const superuser = (password: string, port = poolPort) => as(port, password, spec.database, "postgres");
    const owner = await connect(as(poolPort, "new-password-2"));
    try {
      await provider.rotatePassword(spec.id, "superuser", "super-password-2");
      assert.equal((await owner.query("SELECT 1 AS one")).rows[0].one, 1, "the owner's pooled session goes on");
      assert.match(
        String((await connectError(superuser(spec.superuserPassword)))?.message),
        /password authentication failed|SASL|authentication/i,
      );
      const held = await connect(superuser("super-password-2"));
      try {
        assert.equal((await held.query("SELECT 1 AS one")).rows[0].one, 1);
        await provider.rotatePassword(spec.id, "superuser", "super-password-3");
        assert.equal(await connectError(superuser("super-password-3")), null);
        await assert.rejects(held.query("SELECT 1"));
        assert.match(
          String((await connectError(superuser("super-password-2")))?.message),
          /password authentication failed|SASL|authentication/i,
        );
        assert.equal(await connectError(as(poolPort, "new-password-2")), null, "the owner's password is untouched");
      } finally {
        await held.end().catch(() => {});
      }
    } finally {
      await owner.end().catch(() => {});
    }
  });

  test("a login under way with the old password when the rotation runs cannot complete into a working session", async () => {
    // node-postgres holds back its last SCRAM message until released: PgBouncer has checked the start of
    // this login against the old verifier, and the login is finished only after the rotation
    const stalled = client(as(poolPort, "new-password-2"));
    const conn = (stalled as unknown as { connection: { sendSCRAMClientFinalMessage: (m: string) => void } })
      .connection;
    const sendFinal = conn.sendSCRAMClientFinalMessage.bind(conn);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reachedFinal!: () => void;
    const atFinal = new Promise<void>((r) => (reachedFinal = r));
    conn.sendSCRAMClientFinalMessage = (m) => {
      reachedFinal();
      void released.then(() => sendFinal(m));
    };
    const connecting = stalled.connect().then(
      () => "connected",
      (e: Error) => e.message,
    );
    try {
      await atFinal;
      await provider.rotatePassword(spec.id, "owner", "new-password-3");
      release();
      const login = await connecting;
      // a new-password login first, as before: it is what would let the old login's session be served
      assert.equal(
        await connectError(as(poolPort, "new-password-3")),
        null,
        "the pooler works after the old login finished",
      );
      if (login === "connected")
        await assert.rejects(
          stalled.query("SELECT 1"),
          "the login begun with the old password works after the rotation",
        );
      assert.equal((await provider.poolStatus(spec.id)).running, true);
    } finally {
      release();
      await stalled.end().catch(() => {});
    }
  });
});
