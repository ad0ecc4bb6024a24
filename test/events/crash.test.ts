import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { call, createTestApp, signup, TEST_SECRET_KEY, type TestApp } from "../helpers/app.js";
import { recordEvent } from "../../src/events/public.js";
import { accountOwner } from "../../src/kernel/owner.js";
import { inTransaction } from "../../src/store/db.js";
import { startReceiver, verify } from "./receiver.js";

/**
 * kill -9 between commit and delivery: one event is in flight (the receiver holds its request) and another committed
 * while no worker runs when the platform process is killed; the next process delivers both.
 */
describe("webhooks survive kill -9", () => {
  let t: TestApp;
  let child: ChildProcess | null = null;
  const dir = path.resolve(`.test-data/events-crash-${process.pid}-${Date.now()}`);
  let hold = true;
  const rx = startReceiver(() => (hold ? "hang" : 200));
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
        WEBHOOK_CLAIM_SECONDS: "2",
        WEBHOOK_TIMEOUT_MS: "1500",
        WEBHOOK_SWEEP_MS: "300",
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

  test("an event in flight and one committed while the worker was dead are both delivered after restart", async () => {
    const receiver = await rx;
    const user = await signup(t.app);
    const res = await call(t.app, {
      method: "POST",
      url: "/v1/webhook-endpoints",
      token: user.token,
      body: { url: receiver.url, event_types: ["pod.*"] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const { secret } = res.json();
    const emit = (n: number) =>
      inTransaction(t.db, (tx) =>
        recordEvent(tx, {
          type: "pod.crash_loop",
          owner: accountOwner(user.id),
          resource: { kind: "pod", id: `pod-${n}` },
          data: { n },
        }),
      );

    const first = await startChild();
    const inFlight = await emit(1);
    await receiver.until((r) => r.some((x) => x.event.id === inFlight));
    await kill9(first); // the request is open, unanswered: nothing acknowledged it
    const whileDown = await emit(2);

    hold = false;
    await startChild();
    await receiver.until(
      (r) => [inFlight, whileDown].every((id) => r.some((x) => x.event.id === id && x !== r[0])),
      20_000,
    );
    for (const r of receiver.received) assert.ok(verify(secret, String(r.headers["platform-signature"]), r.body));
    const log = (
      await call(t.app, { url: `/v1/webhook-endpoints/${res.json().id}/deliveries`, token: user.token })
    ).json();
    assert.equal(log.items.length, 2);
  });
});
