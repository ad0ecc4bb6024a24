import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { call, signup, type TestApp } from "../helpers/app.js";
import { busyboxContext, createBuildsTestApp, ended, processesMentioning, startBuild, waitBuild } from "./lib.js";

const SLEEPER = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "echo sleeping; /bin/busybox cat /proc/self/cgroup; /bin/busybox sleep 120"]
`;

// the RUN step's own output (the STEP line echoes its command, so the line must stand alone)
const sleeping = (b: any) => b.status === "building" && /^sleeping$/m.test(b.logs) && /^\d+:[\w,=]*:\//m.test(b.logs);

/**
 * Cancel stops a running build at once (its processes are gone within moments, the reason is recorded),
 * builds wait `queued` behind BUILD_CONCURRENCY, a build over its time is killed and failed, and a RUN step
 * over the memory limit fails the build.
 */
describe("builds: cancel, queue, timeout, memory limit", () => {
  let t: TestApp;
  let alice: { token: string; id: string };
  let archive: Buffer;

  before(async () => {
    t = await createBuildsTestApp({
      env: { BUILD_CONCURRENCY: "1", BUILD_TIMEOUT_SECONDS: "20", BUILD_MEMORY_MB: "256" },
    });
    alice = await signup(t.app);
    archive = await busyboxContext(SLEEPER);
  });
  after(async () => {
    await t?.close();
  });

  test("a second build waits queued; cancelling the running one kills it at once and the queued one starts", async () => {
    const a = await startBuild(t, alice.token, archive);
    await waitBuild(t, alice.token, a.id, sleeping, 60_000);
    const b = await startBuild(t, alice.token, archive);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await call(t.app, { url: `/v1/builds/${b.id}`, token: alice.token })).json().status, "queued");

    const workDir = path.join(t.config.dataDir, "builds", a.id);
    assert.ok((await processesMentioning(workDir)).length > 0, "the builder runs");
    const started = Date.now();
    const res = await call(t.app, {
      method: "POST",
      url: `/v1/builds/${a.id}/cancel`,
      token: alice.token,
      body: { reason: "user pressed ctrl-c", phase: "building", detail: { step: 3 } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, "cancelled");
    assert.deepEqual(res.json().cancel, { reason: "user pressed ctrl-c", phase: "building", detail: { step: 3 } });
    // every process of the build is gone within moments, and its working directory with them
    while ((await processesMentioning(workDir)).length && Date.now() - started < 5000)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await processesMentioning(workDir), []);
    const gone = Date.now() - started;
    assert.ok(gone < 3000, `processes gone after ${gone} ms`);
    const done = await waitBuild(t, alice.token, a.id, () => !existsSync(workDir), 10_000);
    assert.equal(done.status, "cancelled");
    assert.equal(done.status_reason, "user pressed ctrl-c");
    assert.equal(done.image, null);

    // the slot is free: the queued build runs now
    await waitBuild(t, alice.token, b.id, sleeping, 60_000);
    const again = await call(t.app, { method: "POST", url: `/v1/builds/${b.id}/cancel`, token: alice.token });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().cancel.reason, null);
    const twice = await call(t.app, { method: "POST", url: `/v1/builds/${b.id}/cancel`, token: alice.token });
    assert.equal(twice.statusCode, 409, twice.body);
  });

  test("the build runs in a control group of its own, when the host lets the platform make one", async () => {
    const a = await startBuild(t, alice.token, archive);
    const running = await waitBuild(t, alice.token, a.id, sleeping, 60_000);
    await call(t.app, { method: "POST", url: `/v1/builds/${a.id}/cancel`, token: alice.token });
    if (/no control group for builds/.test(running.logs)) return; // rlimits and the timeout still apply
    assert.match(running.logs, new RegExp(`platform-builds/${a.id}`));
  });

  test("a build over BUILD_TIMEOUT_SECONDS is killed and failed, saying so", async () => {
    const a = await startBuild(t, alice.token, archive);
    const done = await waitBuild(t, alice.token, a.id, ended, 60_000);
    assert.equal(done.status, "failed");
    assert.match(done.status_reason, /timed out after 20 s/);
    assert.deepEqual(await processesMentioning(path.join(t.config.dataDir, "builds", a.id)), []);
  });

  test("a RUN step beyond BUILD_MEMORY_MB fails the build", async () => {
    const hog = await busyboxContext(
      `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=400M", "count=1"]\n`,
    );
    const a = await startBuild(t, alice.token, hog);
    const done = await waitBuild(t, alice.token, a.id, ended, 60_000);
    assert.equal(done.status, "failed", done.logs);
    assert.match(done.status_reason, /building failed/);
  });

  test("processes together beyond BUILD_MEMORY_MB are stopped by the build's memory cgroup, and the reason says so", async () => {
    const hog = await busyboxContext(
      `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sh", "-c", "echo; /bin/busybox cat /proc/self/cgroup; for i in 1 2 3; do /bin/busybox dd if=/dev/zero of=/dev/null bs=150M count=40 & eval p$i=$!; done; wait $p1 && wait $p2 && wait $p3"]\n`,
    );
    const a = await startBuild(t, alice.token, hog);
    const done = await waitBuild(t, alice.token, a.id, ended, 60_000);
    assert.equal(done.status, "failed", done.logs);
    if (/no control group for builds/.test(done.logs)) return;
    assert.match(done.status_reason, /out of memory: the build.s limit is 256 MiB/, done.logs);
  });

  test("client events are recorded with the build, the newest kept", async () => {
    const a = await startBuild(t, alice.token, archive);
    const ev = await call(t.app, {
      method: "POST",
      url: `/v1/builds/${a.id}/events`,
      token: alice.token,
      body: { phase: "upload", level: "info", message: "uploaded 1 file", detail: { bytes: archive.length } },
    });
    assert.equal(ev.statusCode, 201, ev.body);
    assert.equal(ev.json().phase, "upload");
    const bad = await call(t.app, {
      method: "POST",
      url: `/v1/builds/${a.id}/events`,
      token: alice.token,
      body: { phase: "x", level: "loud", message: "m" },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    await call(t.app, { method: "POST", url: `/v1/builds/${a.id}/cancel`, token: alice.token });
    const got = (await call(t.app, { url: `/v1/builds/${a.id}`, token: alice.token })).json();
    assert.equal(got.events.length, 1);
    assert.deepEqual(got.events[0].detail, { bytes: archive.length });
  });
});
