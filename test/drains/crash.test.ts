import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { call, createTestApp, signup, TEST_SECRET_KEY, type TestApp } from "../helpers/app.js";
import { accountOwner } from "../../src/kernel/owner.js";
import { insertEdgeLines } from "../../src/drains/repo.js";
import { ndjsonReceiver, until } from "./receivers.js";

/**
 * kill -9 of the shipping process mid-batch: the batch was sent but never acknowledged (the receiver holds its
 * request), so the cursor did not move; the next process sends it again and then the rest: nothing is lost. The
 * lines are the edge's access lines as an edge process flushes them into the store (no pod needed).
 */
describe("log drains survive kill -9", () => {
  let t: TestApp;
  let child: ChildProcess | null = null;
  const dir = path.resolve(`.test-data/drains-crash-${process.pid}-${Date.now()}`);
  let hold = true;
  const rx = ndjsonReceiver(() => (hold ? "hang" : 200));
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    child?.kill("SIGKILL");
    await (await rx).close();
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function startChild(): Promise<ChildProcess> {
    const p = spawn(process.execPath, ["--import", "tsx", "test/events/platform-child.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: t.url,
        DATA_DIR: dir,
        ROLES: "worker",
        PLATFORM_SECRET_KEY: TEST_SECRET_KEY,
        LOG_LEVEL: "silent",
        OUTBOUND_ALLOW: "loopback",
        EDGE_PORT: "0",
        REGISTRY_PORT: "0",
        S3_PORT: "0",
        DRAIN_POLL_MS: "200",
        DRAIN_CLAIM_SECONDS: "2",
        DRAIN_TIMEOUT_MS: "30000",
        DRAIN_BATCH_LINES: "10",
        DRAIN_RETRY_BASE_MS: "100",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    child = p;
    for await (const line of createInterface({ input: p.stdout! })) if (line.startsWith("{")) return p;
    throw new Error("the platform process ended before starting");
  }
  const kill9 = (p: ChildProcess) =>
    new Promise<void>((resolve) => {
      p.once("exit", () => resolve());
      p.kill("SIGKILL");
    });

  test("the batch in flight is sent again after a restart, and the lines after it follow; none is lost", async () => {
    const receiver = await rx;
    const user = await signup(t.app);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/log-drains",
      token: user.token,
      body: { name: "access", destination: receiver.url, source: "edge" },
    });
    assert.equal(res.statusCode, 201, res.body);
    const drainId = res.json().id;
    const app = "00000000-0000-4000-8000-00000000a001";
    await insertEdgeLines(
      t.db,
      Array.from({ length: 25 }, (_, i) => ({
        targetKind: "pod",
        targetId: app,
        owner: accountOwner(user.id),
        at: new Date(),
        line: { source: "edge", app_kind: "pod", app_id: app, host: "x", method: "GET", path: `/n/${i}`, status: 200 },
      })),
    );

    const first = await startChild();
    await until("the first batch is in flight", receiver.requests, (n) => n >= 1);
    await kill9(first); // the request is open, unanswered: nothing acknowledged it
    hold = false;
    await startChild();
    await until(
      "every line arrives",
      () => receiver.lines().map((l) => l.path),
      (ls) => new Set(ls).size === 25,
    ).catch(async (err) => {
      const d = (await call(t.app, { url: `/v1/log-drains/${drainId}`, token: user.token })).json();
      const batches = receiver.batches.map((b) => b.lines.map((l) => l.path).join(","));
      throw new Error(`${(err as Error).message}; drain ${JSON.stringify(d.state)}; batches ${batches.join(" / ")}`);
    });
    const paths = receiver.lines().map((l) => l.path);
    assert.deepEqual(
      paths,
      Array.from({ length: 25 }, (_, i) => `/n/${i}`),
      "in order; the unacknowledged batch once more, since its first send was never answered",
    );
    // the receiver has the last batch a moment before the shipper commits its count
    const state = await until(
      "the count shows",
      async () => (await call(t.app, { url: `/v1/log-drains/${drainId}`, token: user.token })).json().state,
      (x) => x.delivered_count === 25,
    );
    assert.equal(state.dropped_count, 0);
  });
});
