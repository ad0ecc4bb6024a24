import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, createRunning, waitFor, withPassword } from "./lib.js";

/**
 * The databases API on a real PostgreSQL server: stop/start state rules, password rotation, the one-time
 * reveal of initial credentials, snapshot backups and restore validation.
 */

describe("databases API: lifecycle, credentials and backups", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let dev: any;
  before(async () => {
    t = await createTestApp({ startJobs: true });
    user = await signup(t.app);
    // the notes table the stop/start test reads back
    dev = await createRunning(t, user.token, { name: "app-db" });
    const client = await connect(dev.database_url);
    await client.query("CREATE TABLE notes (id int primary key, body text)");
    await client.query("INSERT INTO notes VALUES (1, 'kept')");
    await client.end();
  });
  after(async () => {
    await t.close();
  });

  test("state rules: start needs paused, backup and stop need running, stop needs size dev", async () => {
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/start`, token: user.token }),
      400,
      "not_stopped",
    );
    const stop = await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: user.token });
    assert.equal(stop.statusCode, 202);
    assert.match(stop.json().command_id, /^[0-9a-f-]{36}$/);
    await waitFor(t, user.token, dev.id, (d) => d.state === "paused");
    await assert.rejects(connect(dev.database_url), "a paused database refuses connections");
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/backup`, token: user.token }),
      400,
      "not_running",
    );
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/stop`, token: user.token }),
      400,
      "not_running",
    );
    assert.equal(
      (await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/start`, token: user.token })).statusCode,
      202,
    );
    await waitFor(t, user.token, dev.id, (d) => d.state === "running");
    const client = await connect(dev.database_url);
    assert.equal(
      (await client.query("SELECT body FROM notes WHERE id = 1")).rows[0].body,
      "kept",
      "data survives stop/start",
    );
    await client.end();
  });

  test("rotate-password shows the new password once and refuses the old one at once", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/rotate-password`,
      token: user.token,
    });
    assert.equal(res.statusCode, 200);
    const fresh = res.json().password;
    assert.ok(fresh && fresh !== dev.password);
    await assert.rejects(connect(dev.database_url), /password/);
    const client = await connect(withPassword(dev.database_url, fresh));
    await client.end();
    dev.database_url = withPassword(dev.database_url, fresh);
  });

  test("initial-credentials reveals once, then 409", async () => {
    const first = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/initial-credentials`,
      token: user.token,
    });
    assert.equal(first.statusCode, 200);
    assert.equal(first.json().password, dev.password);
    expectError(
      await call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/initial-credentials`, token: user.token }),
      409,
      "credentials_already_revealed",
    );
  });

  test("snapshot backups appear on the instance and in GET /v1/backups", async () => {
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/databases/${dev.id}/backup`,
      token: user.token,
      body: { label: "before-migration" },
    });
    assert.equal(res.statusCode, 202);
    const d = await waitFor(
      t,
      user.token,
      dev.id,
      (x) => x.backups?.some((b: any) => b.label === "before-migration"),
      60_000,
    );
    const b = d.backups.find((x: any) => x.label === "before-migration");
    assert.equal(b.kind, "snapshot");
    assert.ok(b.size_bytes > 0);
    assert.ok(b.start_lsn && b.stop_lsn);
    const index = (await call(t.app, { url: "/v1/backups", token: user.token })).json();
    assert.ok(index.some((x: any) => x.id === b.id && x.database_id === dev.id));
  });

  test("restore validates the target time, then answers 501 restore_not_ready", async () => {
    const restore = (body?: unknown) =>
      call(t.app, { method: "POST", url: `/v1/databases/${dev.id}/restore`, token: user.token, body });
    expectError(await restore({ target_time: "yesterday" }), 400, "bad_time");
    expectError(await restore({ target_time: new Date(Date.now() + 3600_000).toISOString() }), 400, "future_time");
    expectError(
      await restore({ target_time: new Date(Date.now() - 8 * 86_400_000).toISOString() }),
      400,
      "out_of_retention",
    );
    expectError(await restore({ target_time: new Date(Date.now() - 1000).toISOString() }), 501, "restore_not_ready");
    expectError(await restore(), 501, "restore_not_ready");
  });
});
