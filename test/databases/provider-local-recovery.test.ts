import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import type { InstanceSpec } from "../../src/databases/provider/types.js";
import { eventually, expectProviderError, query, runDetached, sleep, tempProvider } from "./lib.js";

/**
 * The local provider recovering a dev (v16) instance: a provisioning killed mid-way (twice) still reaches running,
 * and a removed instance comes back on its own URL by point-in-time recovery.
 */

describe("local database provider: recovery of a dev instance", { concurrency: false }, () => {
  let dataDir: string;
  let provider: LocalDatabaseProvider;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ dataDir, provider, cleanup } = await tempProvider());
  });
  after(() => cleanup());

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
});
