import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { LocalDatabaseProvider } from "../../src/databases/provider/local/index.js";
import type { Endpoint } from "../../src/databases/provider/types.js";
import { mainSpec, query, rolesOf, sleep, tempProvider } from "./lib.js";

/**
 * The local provider's backups on a real server: point-in-time recovery into a copy, checksummed snapshots,
 * WAL archive continuity and retention.
 */

describe("local database provider: backups, PITR and retention", { concurrency: false }, () => {
  const spec = mainSpec();
  let ep: Endpoint;
  const { owner } = rolesOf(
    spec,
    () => ep.port,
    () => spec.password,
  );
  let dataDir: string;
  let provider: LocalDatabaseProvider;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ dataDir, provider, cleanup } = await tempProvider());
    ep = await provider.provision(spec);
  });
  after(() => cleanup());

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
    const copy = { port: result.endpoint.port, user: spec.user, password: spec.password, database: spec.database };
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
  });
});
