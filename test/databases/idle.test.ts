/**
 * Scale-to-zero of dev databases (issue 30) on real servers: idle_stop_seconds is checked on create and PATCH; an
 * idle dev database stops after its idle time (the sweep run as its job would, instead of waiting a minute), is
 * metered as paused while it sleeps, and the next connections to its address (psql, node-postgres) are held while
 * one start happens, then served by it with the data intact.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { call, createTestApp, expectError, signup, type TestApp } from "../helpers/app.js";
import { connect, createRunning, fund, query, queryWaking, sleep, waitFor } from "./lib.js";
import { databaseMetering } from "../../src/databases/metering.js";
import { databaseIdleJobs, databaseIdleService } from "../../src/databases/idle/service.js";
import type { DatabasesState } from "../../src/databases/module.js";
import type { WakeCapable } from "../../src/databases/provider/wake.js";

const run = promisify(execFile);
const IDLE = 1;

describe("dev databases stop when idle and start on the next connection", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let db: any;

  before(async () => {
    t = await createTestApp({ startJobs: true, env: { DB_IDLE_MIN_SECONDS: String(IDLE), DB_WAKE_SYNC_MS: "200" } });
    user = await signup(t.app);
    db = await createRunning(t, user.token, { name: "sleepy-db", idle_stop_seconds: IDLE });
    const c = await connect(db.database_url);
    await c.query("CREATE TABLE notes (id int primary key, body text)");
    await c.query("INSERT INTO notes VALUES (1, 'kept while asleep')");
    await c.end();
    // the sweep leaves an instance alone while a command runs on it: the first base backup ends first
    await waitFor(t, user.token, db.id, (d) =>
      d.commands.every((c: { status: string }) => c.status === "succeeded" || c.status === "failed"),
    );
  });
  after(async () => {
    await t?.close();
  });

  const api = (method: "GET" | "POST" | "PATCH", url: string, body?: unknown) =>
    call(t.app, { method, url, token: user.token, body });
  const state = () => t.platform.state<DatabasesState>("databases");
  /** the idle sweep as its every-minute job on this host runs it */
  const sweep = async () => {
    const [job] = databaseIdleJobs(state().idle!.sweep);
    await job.handler({}, { id: "test", retryCount: 0 });
  };
  /** asleep, and this process listens in its place (the idle_stop command or the sync loop opened the front) */
  const asleep = async (id: string) => {
    await waitFor(t, user.token, id, (d) => d.state === "idle_stopped", 30_000);
    const deadline = Date.now() + 10_000;
    while (!(state().provider as unknown as WakeCapable).heldWakeFronts().includes(id)) {
      if (Date.now() > deadline) assert.fail("no wake front holds the sleeping database's port");
      await sleep(50);
    }
  };
  const wakeStarts = async (id: string) =>
    (
      await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM database_commands WHERE database_id = $1 AND kind = 'start' AND params->>'reason' = 'wake'",
        [id],
      )
    ).rows[0].n;

  test("idle_stop_seconds: dev only, bounded, set on create and by PATCH", async () => {
    await fund(t, user.id);
    expectError(
      await api("POST", "/v1/databases", { name: "paid-idle", size: "basic", idle_stop_seconds: 600 }),
      400,
      "stop_not_supported",
    );
    expectError(
      await api("POST", "/v1/databases", { name: "zero-idle", idle_stop_seconds: 0 }),
      400,
      "invalid_request",
    );
    expectError(
      await api("POST", "/v1/databases", { name: "long-idle", idle_stop_seconds: 31 * 86_400 }),
      400,
      "invalid_request",
    );
    assert.equal(db.idle_stop_seconds, IDLE);
    const set = await api("PATCH", `/v1/databases/${db.id}`, { idle_stop_seconds: 600 });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().idle_stop_seconds, 600);
    const off = await api("PATCH", `/v1/databases/${db.id}`, { idle_stop_seconds: null });
    assert.equal(off.json().idle_stop_seconds, null);
    expectError(await api("PATCH", `/v1/databases/${db.id}`, { idle_stop_seconds: "soon" }), 400);
    expectError(await api("PATCH", `/v1/databases/${db.id}`, { other: 1 }), 400);
    // a dev database that stops when idle is not resized into an always-on size behind the user's back
    await api("PATCH", `/v1/databases/${db.id}`, { idle_stop_seconds: IDLE });
    expectError(await api("POST", `/v1/databases/${db.id}/resize`, { size: "basic" }), 400, "stop_not_supported");
  });

  test("an open connection keeps it running; idle, it stops and is metered as paused", async () => {
    const held = await connect(db.database_url);
    await sleep(IDLE * 1000 + 200);
    await sweep();
    assert.equal((await api("GET", `/v1/databases/${db.id}`)).json().desired_state, "running", "a client is connected");
    await held.end();

    await sleep(IDLE * 1000 + 200);
    await sweep();
    await asleep(db.id);
    const stopped = (await api("GET", `/v1/databases/${db.id}`)).json();
    assert.equal(stopped.desired_state, "idle_stopped");
    assert.equal(stopped.status_reason, "stopped while idle");
    const metered = await databaseMetering().billableOf(t.db, { kind: "account", id: user.id });
    assert.deepEqual(
      metered.filter((m) => m.id === db.id).map((m) => m.state),
      ["paused"],
      "storage only while it sleeps",
    );
  });

  test("the next connections (psql and 10 concurrent pg clients) wait for one start and see the data", async () => {
    const url = new URL(db.database_url);
    url.password = db.password;
    // a second process's wake over the same store, at the same moment: the row's lock lets one start through
    const otherDeps = {
      db: t.db,
      jobs: t.jobs,
      kernel: t.platform.kernel,
      provider: state().provider as any,
      hostId: t.platform.kernel.require("hosts").local.id,
      wakeTimeoutMs: 60_000,
    };
    const other = databaseIdleService({ ...otherDeps, log: t.app.log });
    // Both wakes wait until the front has taken all ten connections: a start frees the port for the server, and a
    // client still connecting then is refused (or reset, from the closing listener's backlog) until the server
    // listens, which a CI run under load hit. What is checked is that the connections taken share one start.
    const provider = state().provider as unknown as WakeCapable & { fronts: { waiting: number } };
    const allTaken = async () => {
      for (const deadline = Date.now() + 30_000; provider.fronts.waiting < 10; await sleep(20))
        assert.ok(Date.now() < deadline, `the front took ${provider.fronts.waiting} of 10 connections`);
    };
    const here = databaseIdleService({ ...otherDeps, log: t.app.log });
    provider.setWakeHandler(async (id) => {
      await allTaken();
      return here.wake(id);
    });
    const started = Date.now();
    const [rows, outcome] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => queryWaking(url.toString(), "SELECT body FROM notes WHERE id = 1"))),
      allTaken().then(() => other.wake(db.id)),
    ]);
    provider.setWakeHandler(here.wake);
    const tookMs = Date.now() - started;
    assert.deepEqual(outcome, { ok: true });
    assert.deepEqual(
      rows.map((r) => r[0].body),
      Array(10).fill("kept while asleep"),
    );
    assert.equal(await wakeStarts(db.id), 1, "one start for every waiting connection");
    const awake = (await api("GET", `/v1/databases/${db.id}`)).json();
    assert.deepEqual([awake.state, awake.desired_state], ["running", "running"]);
    assert.ok(tookMs < 30_000, `woken in ${tookMs} ms`);

    // psql, straight to the server now that it runs, sees the data; then it sleeps again and psql wakes it
    const psql = (sql: string) =>
      run("psql", [url.toString(), "-XAtc", sql], { timeout: 60_000 }).catch((err: { stderr?: string }) => {
        throw new Error(`psql: ${err.stderr}`);
      });
    assert.equal((await psql("SELECT body FROM notes")).stdout.trim(), "kept while asleep");
    await sleep(IDLE * 1000 + 200);
    await sweep();
    await asleep(db.id);
    await psql("INSERT INTO notes VALUES (2, 'written by the waking psql')");
    assert.equal(await wakeStarts(db.id), 2);
    assert.equal((await psql("SELECT count(*) FROM notes")).stdout.trim(), "2");
    const events = await api("GET", `/v1/events?resource_kind=database&resource_id=${db.id}`);
    assert.equal(events.statusCode, 200, events.body);
    const types = events.json().items.map((e: { type: string }) => e.type);
    assert.equal(types.filter((x: string) => x === "database.woken").length, 2);
    assert.equal(types.filter((x: string) => x === "database.scaled_to_zero").length, 2);
  });

  test("a connection from outside the allowlist is refused by the front as pg_hba would, without a start", async () => {
    await sleep(IDLE * 1000 + 200);
    await sweep();
    await waitFor(t, user.token, db.id, (d) => d.state === "idle_stopped", 30_000);
    const res = await api("PATCH", `/v1/databases/${db.id}/allowlist`, {
      allowlist: [{ cidr: "203.0.113.0/24", label: "office" }],
    });
    assert.equal(res.statusCode, 202, res.body);
    await waitFor(t, user.token, db.id, (d) => d.commands[0].status === "succeeded", 30_000);
    const before = await wakeStarts(db.id);
    const url = new URL(db.database_url);
    url.password = db.password;
    await assert.rejects(query(url.toString(), "SELECT 1"), /no pg_hba.conf entry/);
    assert.equal(await wakeStarts(db.id), before);
    await api("PATCH", `/v1/databases/${db.id}/allowlist`, { allowlist: [] });
  });
});
