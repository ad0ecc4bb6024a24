import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import pino from "pino";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { sleep, waitFor } from "./lib.js";
import { JobQueue } from "../../src/jobs/queue.js";
import { databaseJobs, reconcileNow } from "../../src/databases/jobs.js";
import { COMMAND_JOB } from "../../src/databases/service.js";

/**
 * Issue 19: a command finishing after a later one (stop, then delete a few ms later) must not write back a
 * state the later one superseded; a deleted database ends `removed`, unlisted, its server stopped, whatever
 * order the commands run in, with or without the worker dying between them. Everything goes through the API.
 */

type Pair = "stop" | "start" | "rotate" | "backup";
const PAIRS: Pair[] = ["stop", "start", "rotate", "backup"];
/** Pause between the first request and the DELETE, per round and lane: lands it while the first command is queued, running, or done. */
const ROUNDS = [
  [0, 0, 2, 10],
  [5, 25, 60, 150],
];

const slug = (p: string) => `race-${p}-${randomBytes(3).toString("hex")}`;

async function create(t: TestApp, token: string, name: string): Promise<string> {
  const res = await call(t.app, { method: "POST", url: "/v1/databases", token, body: { name } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

/** Waits for a database to be running, and for the base backup that follows provisioning to have finished. */
async function running(t: TestApp, token: string, id: string): Promise<void> {
  await waitFor(
    t,
    token,
    id,
    (d) => d.state === "running" && !d.commands.some((c: any) => c.status === "queued" || c.status === "running"),
    60_000,
  );
}

async function openCommands(t: TestApp, id: string): Promise<number> {
  const { rows } = await t.db.query(
    "SELECT count(*)::int AS n FROM database_commands WHERE database_id = $1 AND status IN ('queued', 'running')",
    [id],
  );
  return rows[0].n;
}

/** Readies a database for the first request of the pair: running, or paused for `start`. */
async function prepare(t: TestApp, token: string, pair: Pair, id: string): Promise<void> {
  await running(t, token, id);
  if (pair !== "start") return;
  assert.equal((await call(t.app, { method: "POST", url: `/v1/databases/${id}/stop`, token })).statusCode, 202);
  await waitFor(
    t,
    token,
    id,
    (d) => d.state === "paused" && !d.commands.some((c: any) => c.status === "queued" || c.status === "running"),
    30_000,
  );
}

/**
 * The first request of the pair. rotate-password answers only once its command has run, so it is not awaited
 * here: its answer is returned as a promise (200, or 503/400 when the delete got there first).
 */
async function first(t: TestApp, token: string, pair: Pair, id: string): Promise<{ answer: Promise<number> } | null> {
  if (pair === "rotate") {
    let answered = false;
    const pending = call(t.app, { method: "POST", url: `/v1/databases/${id}/rotate-password`, token }).then((r) => {
      answered = true;
      return r.statusCode;
    });
    // the delete comes in once the rotation is recorded (and usually before it has run)
    const recorded =
      "SELECT 1 FROM database_commands WHERE database_id = $1 AND kind = 'rotate_password' AND status IN ('queued', 'running')";
    while (!answered && !(await t.db.query(recorded, [id])).rowCount) await sleep(2);
    return { answer: pending }; // wrapped: an async function returning the promise itself would wait for it
  }
  const url = { stop: "stop", start: "start", backup: "backup" }[pair];
  const res = await call(t.app, {
    method: "POST",
    url: `/v1/databases/${id}/${url}`,
    token,
    body: pair === "backup" ? { label: "race" } : undefined,
  });
  assert.equal(res.statusCode, 202, `${pair}: ${res.body}`);
  return null;
}

async function remove(t: TestApp, token: string, id: string): Promise<void> {
  const res = await call(t.app, { method: "DELETE", url: `/v1/databases/${id}`, token });
  assert.equal(res.statusCode, 202, res.body);
}

/** Removed: GET says so (or 404), the list leaves it out, the server is stopped and marked removed by the provider. */
async function assertRemoved(t: TestApp, token: string, id: string, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await openCommands(t, id)) > 0) {
    if (Date.now() > deadline) throw new Error(`${what}: commands still open after 60 s`);
    await sleep(100);
  }
  const got = await call(t.app, { url: `/v1/databases/${id}`, token });
  if (got.statusCode !== 404) {
    assert.equal(got.statusCode, 200, got.body);
    const d = got.json();
    const cmds = d.commands.map((c: any) => `${c.kind}:${c.status}${c.error ? `(${c.error})` : ""}`).join(", ");
    assert.equal(d.state, "removed", `${what}: state ${d.state}, desired ${d.desired_state}; commands ${cmds}`);
    assert.equal(d.desired_state, "removed", what);
    assert.ok(d.removed_at, what);
  }
  const list = (await call(t.app, { url: "/v1/databases", token })).json();
  assert.ok(!list.some((x: any) => x.id === id), `${what}: still listed`);
  const st = await t.databases.status(id);
  assert.equal(st.running, false, `${what}: the server still runs`);
  assert.equal(st.removed, true, `${what}: the provider does not have it as removed`);
}

/** A worker process of its own: defined like the platform's, started and stopped at will. */
async function startWorker(t: TestApp): Promise<JobQueue> {
  const q = new JobQueue(t.url, pino({ level: "silent" }));
  q.bindHost({ hostId: t.platform.kernel.require("hosts").local.id, worker: true, available: async () => true });
  for (const spec of databaseJobs(q, {
    db: t.db,
    config: t.config,
    provider: t.databases,
    secrets: t.platform.secrets,
    hostId: t.platform.kernel.require("hosts").local.id,
  }))
    q.define(spec);
  await q.start();
  return q;
}

/** Brings a removed lane back for the next round: a restore without a target starts the kept data directory. */
async function revive(t: TestApp, token: string, id: string): Promise<void> {
  const res = await call(t.app, { method: "POST", url: `/v1/databases/${id}/restore`, token });
  assert.equal(res.statusCode, 202, res.body);
  await running(t, token, id);
  assert.ok(
    (await call(t.app, { url: "/v1/databases", token })).json().some((x: any) => x.id === id),
    "a restored database is listed again",
  );
}

/** Databases created once and reused: each round ends removed, then a restore brings them back. */
async function lanes(t: TestApp, token: string, n: number, name: string): Promise<string[]> {
  const ids = await Promise.all(Array.from({ length: n }, (_, i) => create(t, token, slug(`${name}${i}`))));
  await Promise.all(ids.map((id) => running(t, token, id)));
  return ids;
}

// the two suites have their own app, store, provider and workers: they run side by side
describe("databases: commands racing a delete (issue 19)", { concurrency: 2 }, () => {
  describe("databases: a command racing a delete on a live worker", { concurrency: false }, () => {
    let t: TestApp;
    let user: { token: string };
    let ids: string[];
    before(async () => {
      t = await createTestApp({ startJobs: true, env: { DB_RESTORE_ENABLED: "1" } });
      user = await signup(t.app);
      ids = await lanes(t, user.token, 4, "live");
    });
    after(async () => {
      await t?.close();
    });

    for (const pair of PAIRS) {
      test(`${pair} then delete, back to back, ${ROUNDS.length * ROUNDS[0].length} times: each ends removed and unlisted`, async () => {
        for (const delays of ROUNDS) {
          await Promise.all(
            ids.map(async (id, i) => {
              await prepare(t, user.token, pair, id);
              const pending = await first(t, user.token, pair, id);
              if (delays[i]) await sleep(delays[i]);
              await remove(t, user.token, id);
              if (pending) assert.ok([200, 400, 503].includes(await pending.answer));
              await assertRemoved(t, user.token, id, `${pair}+delete, ${delays[i]} ms apart`);
              await revive(t, user.token, id);
            }),
          );
        }
      });
    }
  });

  describe("databases: the worker dies between the two requests", { concurrency: false }, () => {
    let t: TestApp;
    let user: { token: string };
    let worker: JobQueue | null = null;
    let ids: string[];
    before(async () => {
      // the app's own queue only sends; workers are separate queues, like separate processes
      t = await createTestApp({ startJobs: false, env: { DB_RESTORE_ENABLED: "1" } });
      await t.jobs.start();
      user = await signup(t.app);
      worker = await startWorker(t);
      ids = await lanes(t, user.token, 4, "kill");
    });
    after(async () => {
      await worker?.stop();
      await t?.close();
    });

    for (const pair of PAIRS) {
      test(`${pair}, worker stopped, delete, new worker + start-up reconcile: ends removed and unlisted`, async () => {
        // the worker dies 300, 60, 10 and 0 ms after a lane's first request: its command done, running, or still queued
        const gaps = [300, 60, 10, 0];
        await Promise.all(ids.map((id) => prepare(t, user.token, pair, id)));
        const pending: ({ answer: Promise<number> } | null)[] = [];
        for (const [i, id] of ids.entries()) {
          pending.push(await first(t, user.token, pair, id));
          await sleep(gaps[i]);
        }
        await worker!.stop(); // jobs.stop(): the worker dies; what it was running finishes, the rest stays queued
        worker = null;
        await Promise.all(ids.map((id) => remove(t, user.token, id)));
        worker = await startWorker(t);
        await reconcileNow(t.db, worker, t.databases, t.platform.kernel.require("hosts").local.id);
        for (const p of pending) if (p) assert.ok([200, 400, 503].includes(await p.answer));
        for (const id of ids) await assertRemoved(t, user.token, id, `${pair}+delete across a worker restart`);
        await Promise.all(ids.map((id) => revive(t, user.token, id)));
      });
    }

    test("the later delete delivered first: the earlier command, run after it, changes nothing", async () => {
      // with no worker running, the real command handler is run by hand in a chosen order (a redelivery after a crash
      // can come in any order)
      await Promise.all(PAIRS.map((p, i) => prepare(t, user.token, p, ids[i])));
      await worker!.stop();
      worker = null;
      try {
        await reversed();
      } finally {
        worker = await startWorker(t);
      }
    });

    async function reversed(): Promise<void> {
      const byHand = { send: async () => null, hostAvailable: async () => true };
      const defs = new Map(
        databaseJobs(byHand, {
          db: t.db,
          config: t.config,
          provider: t.databases,
          secrets: t.platform.secrets,
          hostId: t.platform.kernel.require("hosts").local.id,
        }).map((d) => [d.name, d]),
      );
      const runCommand = (commandId: string) =>
        defs
          .get(COMMAND_JOB)!
          .handler({ commandId }, { id: commandId, retryCount: 0 })
          .catch((err) => err);
      for (const [i, pair] of PAIRS.entries()) {
        const id = ids[i];
        const pending = await first(t, user.token, pair, id);
        await remove(t, user.token, id);
        const { rows } = await t.db.query<{ id: string; kind: string }>(
          "SELECT id, kind FROM database_commands WHERE database_id = $1 AND status = 'queued' ORDER BY created_at",
          [id],
        );
        assert.deepEqual(
          rows.map((r) => r.kind),
          [{ stop: "stop", start: "start", rotate: "rotate_password", backup: "snapshot" }[pair], "remove"],
        );
        await runCommand(rows[1].id); // remove first
        await runCommand(rows[0].id); // then the command issued before it
        if (pending) assert.equal(await pending.answer, 503, "the rotation never happened, and says so");
        const cmd = (await t.db.query("SELECT status, error FROM database_commands WHERE id = $1", [rows[0].id]))
          .rows[0];
        assert.equal(cmd.status, "failed", `${pair} after remove: ${JSON.stringify(cmd)}`);
        assert.match(cmd.error, /superseded/);
        await assertRemoved(t, user.token, id, `${pair} run after the delete`);
      }
    }

    test("the reconciler converges every (desired, state) pair a removed database can be left in", async () => {
      const id = ids[0];
      if ((await call(t.app, { url: `/v1/databases/${id}`, token: user.token })).json().state !== "removed")
        await remove(t, user.token, id);
      await assertRemoved(t, user.token, id, "plain delete");
      // rows as the lost update (or an older platform) left them, some with the server running again
      const cases: { state: string; serverRunning: boolean; how: "periodic" | "startup" }[] = [
        { state: "paused", serverRunning: false, how: "periodic" },
        { state: "running", serverRunning: true, how: "periodic" },
        { state: "creating", serverRunning: false, how: "periodic" },
        { state: "failed", serverRunning: false, how: "periodic" },
        { state: "removed", serverRunning: true, how: "startup" },
        { state: "paused", serverRunning: true, how: "startup" },
      ];
      for (const c of cases) {
        if (c.serverRunning) await t.databases.start(id);
        await t.db.query("UPDATE databases SET state = $2 WHERE id = $1", [id, c.state]);
        if (c.how === "periodic") await worker!.send("databases.reconcile", {});
        else await reconcileNow(t.db, worker!, t.databases, t.platform.kernel.require("hosts").local.id);
        const deadline = Date.now() + 30_000;
        for (;;) {
          const d = (await call(t.app, { url: `/v1/databases/${id}`, token: user.token })).json();
          const st = await t.databases.status(id);
          if (d.state === "removed" && !st.running && st.removed && (await openCommands(t, id)) === 0) break;
          if (Date.now() > deadline)
            throw new Error(
              `(removed, ${c.state}) never converged: ${JSON.stringify({ state: d.state, running: st.running, removed: st.removed })}`,
            );
          await sleep(200);
        }
        await assertRemoved(t, user.token, id, `(removed, ${c.state}) after the ${c.how} reconcile`);
      }
      // and removed is not a dead end: a restore brings it back, listed and running
      await revive(t, user.token, id);
    });
  });
});
