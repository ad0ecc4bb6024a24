import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";
import { call, createTestApp, expectError, freshDatabase, scopedKey, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { CronState } from "../../src/cron/module.js";

/**
 * Cron jobs through HTTP on real podman containers, with two platforms over one store (two API processes). The
 * scheduler's clock is driven (fireDue with a given `now`) instead of waiting whole minutes.
 */
const mails: { to: string; subject: string; text: string }[] = [];
const inbox = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, session, callback) {
    simpleParser(stream)
      .then((m) => {
        for (const r of session.envelope.rcptTo)
          mails.push({ to: r.address.toLowerCase(), subject: m.subject ?? "", text: m.text ?? "" });
        callback();
      })
      .catch(callback);
  },
});

describe("cron jobs", () => {
  let A: TestApp;
  let B: TestApp;
  let drop: () => Promise<void>;
  let user: { token: string; id: string; email: string };
  let image: string;
  const MINUTE = 60_000;

  const post = (url: string, body: unknown) => call(A.app, { method: "POST", url, token: user.token, body });
  const get = (url: string, t = A) => call(t.app, { url, token: user.token });
  const cron = (t: TestApp) => t.platform.state<CronState>("cron").scheduler;
  /** both processes fire at the same instant; returns every run either made */
  async function fireBoth(now: Date) {
    const [a, b] = await Promise.all([cron(A).fireDue(now), cron(B).fireDue(now)]);
    await Promise.all([...a.map((r) => cron(A).settled(r.id)), ...b.map((r) => cron(B).settled(r.id))]);
    return [...a, ...b];
  }
  async function createJob(body: Record<string, unknown>) {
    const res = await post("/v1/cron-jobs", { image, schedule: "* * * * *", ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  before(async () => {
    image = await testImage("TEST_IMAGE_HTTPD_V1");
    await new Promise<void>((resolve) => inbox.listen(0, "127.0.0.1", resolve));
    const smtp = `smtp://127.0.0.1:${(inbox.server.address() as AddressInfo).port}`;
    const database = await freshDatabase();
    drop = database.drop;
    const env = {
      SMTP_URL: smtp,
      APPS_ALLOW_LOCAL_IMAGES: "1",
      EDGE_PORT: "0",
      REGISTRY_PORT: "0",
      S3_PORT: "0",
      CRON_TICK_MS: "60000", // the tests drive the clock
      CRON_POLL_MS: "100",
    };
    A = await createTestApp({ databaseUrl: database.url, startJobs: true, env: { ...env, HOST_NAME: "cron-a" } });
    B = await createTestApp({ databaseUrl: database.url, startJobs: true, env: { ...env, HOST_NAME: "cron-b" } });
    user = await signup(A.app);
  });

  after(async () => {
    await B?.close();
    await A?.close();
    await drop?.();
    await new Promise<void>((resolve) => inbox.close(() => resolve()));
  });

  test("validation: schedule, time zone, policy, image or pod", async () => {
    expectError(
      await post("/v1/cron-jobs", { name: "bad", image, command: ["true"], schedule: "nope" }),
      400,
      "bad_schedule",
    );
    expectError(
      await post("/v1/cron-jobs", {
        name: "bad",
        image,
        command: ["true"],
        schedule: "* * * * *",
        time_zone: "Mars/Base",
      }),
      400,
      "bad_schedule",
    );
    expectError(
      await post("/v1/cron-jobs", {
        name: "bad",
        command: ["true"],
        schedule: "* * * * *",
        concurrency_policy: "queue",
      }),
      400,
      "invalid_request",
    );
    expectError(
      await post("/v1/cron-jobs", { name: "bad", command: ["true"], schedule: "* * * * *" }),
      400,
      "invalid_request",
    );
    expectError(
      await post("/v1/cron-jobs", { name: "bad", pod: "no-such-pod", command: ["true"], schedule: "@daily" }),
      404,
      "not_found",
    );
    const seoul = await createJob({ name: "seoul", command: ["true"], schedule: "0 9 * * *", time_zone: "Asia/Seoul" });
    assert.equal(new Date(seoul.next_run_at).getUTCHours(), 0); // 09:00 in Seoul is 00:00 UTC
    expectError(
      await post("/v1/cron-jobs", { name: "seoul", image, command: ["true"], schedule: "@daily" }),
      409,
      "slug_taken",
    );
    const other = await signup(A.app);
    expectError(await call(A.app, { url: `/v1/cron-jobs/${seoul.id}`, token: other.token }), 404, "not_found");
    assert.equal(
      (await call(A.app, { method: "DELETE", url: `/v1/cron-jobs/${seoul.id}`, token: user.token })).statusCode,
      200,
    );
  });

  test("scopes: cron-jobs keys, and instance-limited ones see only their job", async () => {
    const one = await createJob({ name: "scoped-one", command: ["true"], suspended: true });
    await createJob({ name: "scoped-two", command: ["true"], suspended: true });
    assert.equal(one.next_run_at, null); // suspended: nothing scheduled
    const podsKey = await scopedKey(A.app, user.token, ["pods:*"]);
    expectError(await call(A.app, { url: "/v1/cron-jobs", token: podsKey }), 403, "scope_insufficient");
    const key = await scopedKey(A.app, user.token, [`cron-jobs:read:${one.id}`]);
    const listed = (await call(A.app, { url: "/v1/cron-jobs", token: key })).json();
    assert.deepEqual(
      listed.map((j: any) => j.name),
      ["scoped-one"],
    );
    expectError(await call(A.app, { url: "/v1/cron-jobs/scoped-two", token: key }), 403, "scope_insufficient");
    expectError(
      await call(A.app, { method: "POST", url: `/v1/cron-jobs/${one.id}/run`, token: key, body: {} }),
      403,
      "scope_insufficient",
    );
    for (const name of ["scoped-one", "scoped-two"])
      await call(A.app, { method: "DELETE", url: `/v1/cron-jobs/${name}`, token: user.token });
  });

  test("a run every minute fires once per minute across two processes, to completion with exit code, duration and logs", async () => {
    const job = await createJob({
      name: "every-minute",
      command: ["/bin/busybox", "sh", "-c", 'echo "hello $WHO"'],
      env: { WHO: "cron" },
    });
    const first = new Date(job.next_run_at);
    for (let i = 0; i < 3; i++) {
      const fired = await fireBoth(new Date(first.getTime() + i * MINUTE + 1000));
      assert.equal(fired.filter((r) => r.job_id === job.id).length, 1, `minute ${i}: ${JSON.stringify(fired)}`);
    }
    // firing the same instant again fires nothing
    assert.equal((await fireBoth(new Date(first.getTime() + 2 * MINUTE + 2000))).length, 0);
    const runs = (await get(`/v1/cron-jobs/${job.id}/runs`, B)).json();
    assert.equal(runs.length, 3, JSON.stringify(runs));
    assert.deepEqual(
      runs.map((r: any) => new Date(r.scheduled_at).getTime()).sort(),
      [0, 1, 2].map((i) => first.getTime() + i * MINUTE),
    );
    for (const r of runs) {
      assert.equal(r.state, "succeeded", JSON.stringify(r));
      assert.equal(r.exit_code, 0);
      assert.ok(r.duration_ms >= 0);
      const logs = (await get(`/v1/cron-jobs/${job.id}/runs/${r.id}/logs`)).json();
      assert.deepEqual(logs.lines, ["hello cron"]);
    }
    assert.equal(
      (await get(`/v1/cron-jobs/${job.id}`)).json().next_run_at,
      new Date(first.getTime() + 3 * MINUTE).toISOString(),
    );
    await call(A.app, { method: "DELETE", url: `/v1/cron-jobs/${job.id}`, token: user.token });
  });

  test("forbid skips a run while one is still going", async () => {
    const job = await createJob({
      name: "slow",
      command: ["/bin/busybox", "sleep", "30"],
      concurrency_policy: "forbid",
      deadline_seconds: 60,
    });
    const first = new Date(job.next_run_at);
    const [running] = await cron(A).fireDue(new Date(first.getTime() + 1000));
    assert.equal(running.state, "running");
    const [skipped] = await cron(B).fireDue(new Date(first.getTime() + MINUTE + 1000));
    assert.equal(skipped.state, "skipped");
    assert.match(skipped.reason!, /still going/);
    // deleting the job stops the run still going
    assert.equal(
      (await call(A.app, { method: "DELETE", url: `/v1/cron-jobs/${job.id}`, token: user.token })).statusCode,
      200,
    );
    const ended = await cron(A).settled(running.id);
    assert.equal(ended?.state, "cancelled");
  });

  test("a failed run (and a run now) tells the owner by mail", async () => {
    const job = await createJob({ name: "broken", command: ["/bin/busybox", "sh", "-c", "echo boom >&2; exit 3"] });
    const res = await post(`/v1/cron-jobs/${job.id}/run`, {});
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().trigger, "manual");
    const done = await cron(A).settled(res.json().id);
    assert.equal(done?.state, "failed");
    assert.equal(done?.exit_code, 3);
    const logs = (await get(`/v1/cron-jobs/${job.id}/runs/${res.json().id}/logs`)).json();
    assert.deepEqual(logs.lines, ["boom"]);
    for (let i = 0; i < 50 && !mails.some((m) => m.subject.includes("broken")); i++)
      await new Promise((r) => setTimeout(r, 100));
    const mail = mails.find((m) => m.subject.includes("broken"));
    assert.ok(mail, JSON.stringify(mails));
    assert.equal(mail.to, user.email.toLowerCase());
    assert.match(mail.subject, /run failed/);
    assert.match(mail.text, /exit code 3/);

    // a missed instant (found long after its time) is recorded and told too
    const [missed] = await cron(B).fireDue(new Date(new Date(job.next_run_at).getTime() + 10 * MINUTE));
    assert.equal(missed.state, "missed");
    for (let i = 0; i < 50 && !mails.some((m) => m.subject.includes("missed")); i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      mails.some((m) => m.subject === 'Cron job "broken": missed a run'),
      JSON.stringify(mails),
    );
  });
});

describe("cron jobs: secrets and a pod's release", () => {
  let t: TestApp;
  let user: { token: string; id: string };
  let podId = "";
  const POD_SECRET = "pod-secret-7d1c4b2a";
  const JOB_SECRET = "job-secret-91ab3e5f";
  const hidden = (text: string) => {
    for (const v of [POD_SECRET, JOB_SECRET]) assert.ok(!text.includes(v), `a secret shows in: ${text.slice(0, 500)}`);
  };

  before(async () => {
    t = await createTestApp({ startJobs: true, env: { APPS_ALLOW_LOCAL_IMAGES: "1", CRON_TICK_MS: "60000" } });
    user = await signup(t.app);
  });
  after(async () => {
    await call(t.app, { method: "DELETE", url: `/v1/pods/${podId}`, token: user.token });
    await t?.close();
  });

  test("a job from a pod gets that release's env and secrets; its own secret_env is sealed and masked", async () => {
    const image = await testImage("TEST_IMAGE_HTTPD_V1");
    const pod = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: user.token,
      body: {
        name: "cron-src",
        image,
        port: 8080,
        env: { FROM_POD: "plain-pod" },
        secret_env: { POD_TOKEN: POD_SECRET },
      },
    });
    assert.equal(pod.statusCode, 201, pod.body);
    podId = pod.json().id;
    const made = await call(t.app, {
      method: "POST",
      url: "/v1/cron-jobs",
      token: user.token,
      body: {
        name: "with-secrets",
        pod: pod.json().id,
        schedule: "@daily",
        command: ["/bin/busybox", "sh", "-c", 'echo "$FROM_POD $POD_TOKEN $JOB_TOKEN ${#JOB_TOKEN}"; exit 1'],
        secret_env: { JOB_TOKEN: JOB_SECRET },
      },
    });
    assert.equal(made.statusCode, 201, made.body);
    hidden(made.body);
    const job = made.json();
    assert.match(job.secret_env.JOB_TOKEN.fingerprint, /^hmac-sha256:[0-9a-f]{32}$/);
    assert.equal(job.release.number, pod.json().release ?? 1);
    assert.deepEqual(job.release.env, { FROM_POD: "plain-pod" });
    assert.equal(job.release.secret_env.POD_TOKEN.fingerprint, pod.json().secret_env.POD_TOKEN.fingerprint);
    hidden(JSON.stringify((await t.db.query("SELECT * FROM cron_jobs WHERE id = $1", [job.id])).rows));

    const run = await call(t.app, { method: "POST", url: `/v1/cron-jobs/${job.id}/run`, token: user.token, body: {} });
    assert.equal(run.statusCode, 202, run.body);
    const done = await t.platform.state<CronState>("cron").scheduler.settled(run.json().id);
    assert.equal(done?.state, "failed"); // and so it is mailed: the mail carries the masked log lines
    const logs = (
      await call(t.app, { url: `/v1/cron-jobs/${job.id}/runs/${run.json().id}/logs`, token: user.token })
    ).json();
    assert.deepEqual(logs.lines, [`plain-pod [secret POD_TOKEN] [secret JOB_TOKEN] ${JOB_SECRET.length}`]);
    hidden(JSON.stringify((await t.db.query("SELECT * FROM cron_runs")).rows));

    // a change keeps what is not named; null removes
    const changed = await call(t.app, {
      method: "PATCH",
      url: `/v1/cron-jobs/${job.id}`,
      token: user.token,
      body: { env: { JOB_TOKEN: "x" } },
    });
    expectError(changed, 400, "invalid_request");
    const gone = await call(t.app, {
      method: "PATCH",
      url: `/v1/cron-jobs/${job.id}`,
      token: user.token,
      body: { secret_env: { JOB_TOKEN: null } },
    });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.deepEqual(gone.json().secret_env, {});
    hidden((await call(t.app, { url: "/v1/cron-jobs", token: user.token })).body);
    hidden((await call(t.app, { url: "/v1/me/audit", token: user.token })).body);
    hidden(JSON.stringify((await t.db.query("SELECT * FROM audit_log WHERE account_id = $1", [user.id])).rows));
  });
});
