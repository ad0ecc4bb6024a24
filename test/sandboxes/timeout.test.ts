import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { call, createTestApp, expectError, freshDatabase, signup, type TestApp } from "../helpers/app.js";
import { sandboxLabels } from "../../src/sandboxes/service.js";
import { cleanupSandboxes, containerExists, exec, hostId, post, reapNow, sandboxes, waitFor } from "./lib.js";

const until = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now() + 100)));

/**
 * A sandbox never outlives its timeout: the runtime kills and deletes the container at its time by itself
 * (so also while no platform process runs), and the reaper marks the rows and cleans orphans and
 * creations a crash interrupted, at start and periodically.
 */
describe("sandboxes: timeouts, the reaper and platform restarts", () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataDir: string;
  let t: TestApp;
  let user: { token: string; id: string };
  const open = (startJobs = false) =>
    createTestApp({ databaseUrl: database.url, startJobs, env: { DATA_DIR: dataDir } });

  before(async () => {
    database = await freshDatabase();
    // one data directory for every app of this file: the same host, restarted
    dataDir = await mkdtemp(path.resolve(".test-data/sandbox-restart-"));
    t = await open();
    user = await signup(t.app);
  });
  after(async () => {
    await cleanupSandboxes(t.db, hostId(t));
    await t.close();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const get = (id: string) => call(t.app, { url: `/v1/sandboxes/${id}`, token: user.token }).then((r) => r.json());

  test("at its timeout the container is gone; the sandbox shows expired and refuses exec; the reaper marks it", async () => {
    const sb = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 10 })).json();
    assert.equal(sb.state, "running");
    const expiresAt = Date.parse(sb.expires_at);
    // a command asking for more time than the sandbox has left is cut at its end
    const cutRes = await exec(t, user.token, sb.id, ["sleep", "60"], 600);
    assert.equal(cutRes.statusCode, 200, cutRes.body);
    const cut = cutRes.json();
    assert.equal(cut.timed_out, true);
    assert.ok(Date.now() >= expiresAt - 2500 && Date.now() < expiresAt + 3000, "cut when the sandbox ends");
    await waitFor("the container removed by podman", async () => !containerExists(sb.id), 5000);
    assert.ok(Date.now() < expiresAt, "gone before its time");
    await until(expiresAt);
    const shown = await get(sb.id);
    assert.equal(shown.state, "expired", "shown expired before the reaper ran");
    expectError(await exec(t, user.token, sb.id, ["true"]), 409, "conflict");

    const reaped = await reapNow(t);
    assert.deepEqual(reaped.expired, [sb.id]);
    const after = await get(sb.id);
    assert.equal(after.state, "expired");
    assert.match(after.state_reason, /timed out after 10 s/);
    // still listed for a day, as expired
    const listed = (await call(t.app, { url: "/v1/sandboxes", token: user.token })).json();
    assert.ok(listed.some((s: { id: string; state: string }) => s.id === sb.id && s.state === "expired"));
    assert.deepEqual((await reapNow(t)).expired, [], "nothing twice");
  });

  test("across a platform restart: the container dies on time while no platform runs; the restarted one marks it", async () => {
    const sb = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 10 })).json();
    const expiresAt = Date.parse(sb.expires_at);
    // a creation the platform never finished (it died between the row and the container), long ago
    const interrupted = randomUUID();
    await t.db.query(
      `INSERT INTO sandboxes (id, owner_kind, owner_id, account_id, image, network, timeout_s, host_id, state, created_at, expires_at)
       VALUES ($1, 'account', $2, $2, 'x', false, 3600, $3, 'running', now() - interval '20 minutes', now() + interval '40 minutes')`,
      [interrupted, user.id, hostId(t)],
    );
    // a sandbox container no row knows (a row purged, or a test leftover)
    const orphan = `sbx-${randomUUID()}`;
    await sandboxes(t).runtime.create({
      name: orphan,
      image: "localhost/platform/sandbox:busybox",
      command: ["sleep", "600"],
      env: {},
      limits: { cpus: 1, memoryMb: 32, pids: 16 },
      network: null,
      mounts: [],
      labels: { ...sandboxLabels(hostId(t)), "platform.sandbox": orphan.slice(4) },
    });

    await t.close(); // the platform stops; nothing of it runs while the sandbox's time passes
    await waitFor("the container removed without the platform", async () => !containerExists(sb.id), 15_000);
    assert.ok(Date.now() < expiresAt, "gone before its time with no platform process running");
    await until(expiresAt);

    t = await open(true); // the same host and store: its start hook reaps
    const shown = await get(sb.id);
    assert.equal(shown.state, "expired");
    assert.match(shown.state_reason, /timed out/);
    const never = await get(interrupted);
    assert.equal(never.state, "expired");
    assert.match(never.state_reason, /creation did not finish/);
    assert.equal(await sandboxes(t).runtime.inspect(orphan), null, "the orphan container is removed");
  });

  test("a sandbox whose container vanished before its time (host restart) is marked expired with the reason", async () => {
    const sb = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 600 })).json();
    await sandboxes(t).runtime.remove(`sbx-${sb.id}`);
    expectError(await exec(t, user.token, sb.id, ["true"]), 409, "conflict");
    const shown = await get(sb.id);
    assert.equal(shown.state, "expired");
    assert.match(shown.state_reason, /stopped before/);

    const lost = (await post(t, user.token, "/v1/sandboxes", { timeout_s: 600 })).json();
    await sandboxes(t).runtime.remove(`sbx-${lost.id}`);
    assert.deepEqual((await reapNow(t)).expired, [lost.id]);
    assert.match((await get(lost.id)).state_reason, /host restart/);
  });
});
