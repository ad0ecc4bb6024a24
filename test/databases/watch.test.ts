import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rename } from "node:fs/promises";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { watchDatabases } from "../../src/databases/watch.js";
import { query, waitFor } from "./lib.js";

/**
 * The watcher (job databases.watch, run here on demand): storage autoscale acted on, and the WAL
 * continuity check shown as backup_health in GET /v1/databases/{id}.
 */
describe("databases watcher: storage autoscale and backup health", { concurrency: false }, () => {
  let t: TestApp;
  let user: { token: string; id: string };
  const watch = (id: string) => watchDatabases({ db: t.db, provider: t.databases }, [id]);
  const get = async (id: string) => (await call(t.app, { url: `/v1/databases/${id}`, token: user.token })).json();

  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
  });
  after(async () => {
    await t?.close();
  });

  test("backup_health: ok once the first base backup exists; a segment missing from the archive is reported, with its name", async () => {
    const created = (
      await call(t.app, { method: "POST", url: "/v1/databases", token: user.token, body: { name: "health-db" } })
    ).json();
    assert.equal(created.backup_health, null, "not checked yet");
    // the watcher leaves an instance alone while a command runs: wait for the first base backup's command
    const d = await waitFor(
      t,
      user.token,
      created.id,
      (x) =>
        x.state === "running" && x.commands?.some((c: any) => c.kind === "base_backup" && c.status === "succeeded"),
      60_000,
    );
    const base = d.backups.find((b: any) => b.kind === "base");
    // ~25 MB of WAL: segments finished after the backup's own
    await query(
      created.database_url,
      "CREATE TABLE t AS SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 100000) g",
    );
    // while a command holds the instance (here: its advisory lock, held as a worker would), the watcher skips it
    const holder = await t.db.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtext('database:' || $1))", [created.id]);
      await watch(created.id);
      assert.equal((await get(created.id)).backup_health, null, "a busy instance is left alone");
      await holder.query("SELECT pg_advisory_unlock(hashtext('database:' || $1))", [created.id]);
    } finally {
      holder.release();
    }
    await watch(created.id);
    const healthy = await get(created.id);
    assert.equal(healthy.backup_health.ok, true, JSON.stringify(healthy.backup_health));
    assert.equal(healthy.backup_health.problem, null);
    assert.equal(healthy.backup_health.base_backup_id, base.id);
    assert.ok(healthy.backup_health.checked_segments >= 2, JSON.stringify(healthy.backup_health));
    assert.deepEqual(healthy.backup_health.missing_segments, []);
    assert.deepEqual(healthy.backup_health.corrupt_backups, [], "the base backup's files still match their checksums");
    assert.ok(Date.parse(healthy.backup_health.checked_at) > Date.now() - 60_000);
    assert.ok(healthy.storage_used_bytes > 10 * 2 ** 20, `usage ${healthy.storage_used_bytes}`);
    // the archived WAL is indexed as backups of kind wal
    assert.ok(healthy.backups.some((b: any) => b.kind === "wal" && b.id === healthy.backup_health.from_segment));

    // a gap in the archive: recovery past it would be impossible, and the status says so
    const seg = (await t.databases.listArchivedWal(created.id)).find(
      (w) => w.id === healthy.backup_health.from_segment,
    )!;
    assert.ok(seg, "the backup's first segment is archived");
    await rename(seg.path, `${seg.path}.hidden`);
    try {
      await watch(created.id);
      const broken = (await get(created.id)).backup_health;
      assert.equal(broken.ok, false);
      assert.deepEqual(broken.missing_segments, [seg.id]);
      assert.match(broken.problem, /missing from the archive/);
    } finally {
      await rename(`${seg.path}.hidden`, seg.path);
    }
    await watch(created.id);
    assert.equal((await get(created.id)).backup_health.ok, true, "healthy again once the segment is back");
  });

  test("storage autoscale: usage across threshold_pct grows storage_gb by step_gb, capped at max_gb, and the server's quota follows", async () => {
    const created = (
      await call(t.app, {
        method: "POST",
        url: "/v1/databases",
        token: user.token,
        body: { name: "grow-db", storage_gb: 1 },
      })
    ).json();
    assert.equal(created.storage_gb, 1);
    await waitFor(
      t,
      user.token,
      created.id,
      (x) =>
        x.state === "running" &&
        x.commands?.every((c: any) => c.status === "succeeded") &&
        x.commands.some((c: any) => c.kind === "base_backup"),
      60_000,
    );
    const settings = await call(t.app, {
      method: "PATCH",
      url: `/v1/databases/${created.id}/storage`,
      token: user.token,
      body: { enabled: true, threshold_pct: 50, step_gb: 5, max_gb: 3 },
    });
    assert.equal(settings.statusCode, 200, settings.body);

    // a fresh cluster (~40 MB) is far below 50% of 1 GB: nothing happens
    await watch(created.id);
    let d = await get(created.id);
    assert.equal(d.storage_gb, 1);
    assert.ok(!d.commands.some((c: any) => c.kind === "storage_autoscale"));

    // ~600 MB of rows (plus their WAL) crosses 512 MB
    await query(
      created.database_url,
      "CREATE TABLE filler AS SELECT g, repeat(md5(g::text), 16) AS pad FROM generate_series(1, 750000) g",
    );
    await watch(created.id);
    d = await get(created.id);
    assert.ok(d.storage_used_bytes > 512 * 2 ** 20, `usage ${d.storage_used_bytes} should cross 50% of 1 GB`);
    assert.equal(d.storage_gb, 3, "grown by step_gb 5, but not past max_gb 3");
    const grow = d.commands.find((c: any) => c.kind === "storage_autoscale");
    assert.equal(grow?.status, "succeeded");
    assert.equal(d.status_reason, null, "not read-only");
    // the server-side quota follows the store
    assert.equal((await t.databases.status(created.id)).storageGb, 3);
    await query(created.database_url, "INSERT INTO filler VALUES (0, 'still writable')");

    // at max_gb nothing more happens, whatever the usage
    await t.db.query(
      "UPDATE databases SET storage_autoscale = storage_autoscale || '{\"threshold_pct\": 1}' WHERE id = $1",
      [created.id],
    );
    await watch(created.id);
    d = await get(created.id);
    assert.equal(d.storage_gb, 3);
    assert.equal(d.commands.filter((c: any) => c.kind === "storage_autoscale").length, 1);
  });
});
