import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connectError, query, sleep, waitCommand, waitFor } from "./lib.js";

/**
 * Restore through the API with DB_RESTORE_ENABLED=1: real point-in-time recovery (base backup +
 * archived WAL + recovery target) of a live instance, and bringing back a removed one.
 */
describe("databases: restore with DB_RESTORE_ENABLED=1", { concurrency: false }, () => {
  let t: TestApp;
  let user: { token: string };
  let db: any;
  let baseBackupAt: Date;
  const restore = (body?: unknown) =>
    call(t.app, { method: "POST", url: `/v1/databases/${db.id}/restore`, token: user.token, body });
  const rows = async () => (await query(db.database_url, "SELECT n FROM pitr ORDER BY n")).map((r) => r.n);

  before(async () => {
    t = await createTestApp({ env: { DB_RESTORE_ENABLED: "1" }, startJobs: true });
    user = await signup(t.app);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/databases",
      token: user.token,
      body: { name: "pitr-db" },
    });
    assert.equal(res.statusCode, 201, res.body);
    db = res.json();
  });
  after(async () => {
    await t?.close();
  });

  test("provisioning ends with a first base backup, the start of the recoverable window", async () => {
    const d = await waitFor(
      t,
      user.token,
      db.id,
      // the backup's row completes a moment before its command is marked succeeded: wait for both
      (x) =>
        x.state === "running" &&
        x.backups?.some((b: any) => b.kind === "base") &&
        x.commands?.some((c: any) => c.kind === "base_backup" && c.status !== "queued" && c.status !== "running"),
      60_000,
    );
    const base = d.backups.find((b: any) => b.kind === "base");
    assert.equal(base.status, "complete");
    assert.ok(base.start_lsn && base.stop_lsn && base.size_bytes > 0);
    baseBackupAt = new Date(base.finished_at);
    assert.ok(d.commands.some((c: any) => c.kind === "base_backup" && c.status === "succeeded"));
    // before that backup nothing can be recovered: a target there is refused before anything happens
    expectError(
      await restore({ target_time: new Date(baseBackupAt.getTime() - 50).toISOString() }),
      400,
      "out_of_retention",
    );
    expectError(await restore({ target_time: "2026-13-01T00:00:00Z" }), 400, "bad_time");
    expectError(await restore({ target_time: new Date(Date.now() + 60_000).toISOString() }), 400, "future_time");
  });

  test("PITR through the API: write rows, note the time, write more, restore to it → exactly the first rows", async () => {
    await query(db.database_url, "CREATE TABLE pitr (n int)");
    await query(db.database_url, "INSERT INTO pitr SELECT generate_series(1, 5)");
    await sleep(500);
    const noted = new Date();
    await sleep(500);
    await query(db.database_url, "INSERT INTO pitr SELECT generate_series(6, 10)");
    await query(db.database_url, "CREATE TABLE later (x int)");
    assert.deepEqual(await rows(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // a password rotated after the target time must stay rotated: recovery must not bring the old one back
    const rotated = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${db.id}/rotate-password`,
      token: user.token,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const beforeRotation = db.database_url;
    db.database_url = rotated.json().database_url;

    const res = await restore({ target_time: noted.toISOString() });
    assert.equal(res.statusCode, 202, res.body);
    const commandId = res.json().command_id;
    assert.equal(
      (await call(t.app, { url: `/v1/databases/${db.id}`, token: user.token })).json().state,
      "creating",
      "the instance shows the restore in progress",
    );
    const d = await waitCommand(t, user.token, db.id, commandId, 120_000);
    assert.equal(d.state, "running");
    const cmd = d.commands.find((c: any) => c.id === commandId);
    assert.equal(cmd.kind, "restore");

    assert.deepEqual(await rows(), [1, 2, 3, 4, 5], "exactly the rows committed before the target time");
    assert.ok(await connectError(beforeRotation), "the password from before the rotation is still refused");
    assert.equal(
      (await query(db.database_url, "SELECT to_regclass('later') AS t"))[0].t,
      null,
      "a table created after the target is gone",
    );
    assert.equal(d.port, db.port, "the same URL serves the restored data");
    // the restored server is a normal writable primary on a new timeline
    await query(db.database_url, "INSERT INTO pitr VALUES (11)");
    const tl = await query(db.superuser_database_url, "SELECT pg_walfile_name(pg_current_wal_lsn()) AS f");
    assert.ok(parseInt(tl[0].f.slice(0, 8), 16) >= 2, `new timeline after recovery, got ${tl[0].f}`);
    // a fresh base backup follows the recovery (the new timeline's starting point)
    await waitFor(t, user.token, db.id, (x) => x.backups.filter((b: any) => b.kind === "base").length >= 2, 60_000);
  });

  test("a removed instance is brought back by restore within its 7 days, with its data and URL", async () => {
    const del = await call(t.app, { method: "DELETE", url: `/v1/databases/${db.id}`, token: user.token });
    assert.equal(del.statusCode, 202);
    await waitCommand(t, user.token, db.id, del.json().command_id);
    assert.match(String((await connectError(db.database_url))?.message), /ECONNREFUSED/);
    assert.ok(
      !(await call(t.app, { url: "/v1/databases", token: user.token })).json().some((x: any) => x.id === db.id),
    );

    const res = await restore();
    assert.equal(res.statusCode, 202, res.body);
    const d = await waitCommand(t, user.token, db.id, res.json().command_id, 120_000);
    assert.deepEqual([d.state, d.removed_at], ["running", null]);
    assert.deepEqual(await rows(), [1, 2, 3, 4, 5, 11], "everything up to the deletion is back");
    assert.ok(
      (await call(t.app, { url: "/v1/databases", token: user.token })).json().some((x: any) => x.id === db.id),
      "listed again",
    );
    await query(db.database_url, "INSERT INTO pitr VALUES (12)");
  });

  test("a removed instance can also be restored to a point in time before its deletion", async () => {
    await sleep(300);
    const noted = new Date();
    await sleep(300);
    await query(db.database_url, "INSERT INTO pitr VALUES (13)");
    const del = await call(t.app, { method: "DELETE", url: `/v1/databases/${db.id}`, token: user.token });
    await waitCommand(t, user.token, db.id, del.json().command_id);
    const res = await restore({ target_time: noted.toISOString() });
    assert.equal(res.statusCode, 202, res.body);
    const d = await waitCommand(t, user.token, db.id, res.json().command_id, 120_000);
    assert.equal(d.state, "running");
    assert.deepEqual(await rows(), [1, 2, 3, 4, 5, 11, 12]);
  });

  test("after the 7 days a removed instance is not restorable: 404", async () => {
    const del = await call(t.app, { method: "DELETE", url: `/v1/databases/${db.id}`, token: user.token });
    await waitCommand(t, user.token, db.id, del.json().command_id);
    // the grace period is measured from removed_at; move it back instead of waiting a week
    await t.db.query("UPDATE databases SET removed_at = now() - interval '7 days 1 minute' WHERE id = $1", [db.id]);
    expectError(await restore(), 404, "not_found");
  });
});
