import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { testImage } from "../helpers/images.js";
import { createRuntime, RuntimeError } from "../../src/runtime/index.js";
import { PodmanRuntime } from "../../src/runtime/podman/runtime.js";
import { TIMED_OUT_EXIT_CODE } from "../../src/runtime/podman/exec.js";
import { cleanup, LABEL, podman, PREFIX, runtime, spec, waitFor } from "./lib.js";

/**
 * The local runtime (rootful podman) on real containers: creation with loopback ports, limits, labels
 * and environment; idempotence; health; exec bounds; logs; stats; list by labels; timeouts; refusals.
 */
describe("podman runtime: containers", () => {
  let v1: string;
  before(async () => {
    assert.equal(await runtime.unavailable(), null, "podman runs on this host");
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    await runtime.ensureNetwork(`${PREFIX}-net`);
  });
  after(cleanup);

  test("create starts the container, publishes its port on 127.0.0.1 only, and is idempotent by name", async (t) => {
    const started = Date.now();
    const c = await runtime.create(
      spec("web", v1, { port: 8080, network: `${PREFIX}-net`, labels: { ...LABEL, pod: "p1" } }),
    );
    const created = Date.now() - started;
    await waitFor("healthy", () => runtime.health(c.name));
    const healthy = Date.now() - started;
    t.diagnostic(`create ${created} ms, create-to-healthy ${healthy} ms`);
    assert.equal(c.status, "running");
    assert.match(c.address!, /^127\.0\.0\.1:\d+$/);
    assert.match(c.networkAddress!, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(c.labels.pod, "p1");
    assert.equal(await (await fetch(`http://${c.address}/`)).text(), "v1\n");
    const ports = JSON.parse(podman("container", "inspect", c.name))[0].NetworkSettings.Ports["8080/tcp"];
    assert.deepEqual(
      ports.map((p: { HostIp: string }) => p.HostIp),
      ["127.0.0.1"],
    );

    // the same name again (even with another spec) answers the container that exists
    const again = await runtime.create(spec("web", "localhost/platform-test/absent:1", { network: null }));
    assert.equal(again.id, c.id);
    const inspected = await runtime.inspect(c.name);
    assert.equal(inspected?.address, c.address);
    assert.equal(await runtime.inspect(`${PREFIX}-nothing`), null);
  });

  test("limits, ulimits, runc and environment are applied; secrets stay off podman's command line", async () => {
    const c = await runtime.create(
      spec("limits", v1, {
        command: ["sleep", "60"],
        env: { DATABASE_URL: "postgres://u:very-secret@h/db", PATH: "/bin", "A.B": "dots" },
        limits: { cpus: 0.25, memoryMb: 48, pids: 32 },
      }),
    );
    const i = JSON.parse(podman("container", "inspect", c.name))[0];
    assert.equal(i.HostConfig.NanoCpus, 250_000_000);
    assert.equal(i.HostConfig.Memory, 48 * 1024 * 1024);
    assert.equal(i.HostConfig.PidsLimit, 32);
    assert.equal(i.OCIRuntime, "runc");
    assert.deepEqual(
      i.HostConfig.Ulimits.map((u: { Name: string; Soft: number; Hard: number }) => `${u.Name}=${u.Soft}:${u.Hard}`),
      ["RLIMIT_NOFILE=20000:20000", "RLIMIT_NPROC=20000:20000"],
    );
    assert.equal(i.HostConfig.NetworkMode, "none");
    assert.ok(!JSON.stringify(i.Config.CreateCommand).includes("very-secret"), "the secret is not in the command");
    const env = await runtime.exec(c.name, ["sh", "-c", 'echo "$DATABASE_URL|$PATH"'], {
      timeoutMs: 5000,
      maxBytes: 4096,
    });
    assert.equal(env.stdout, "postgres://u:very-secret@h/db|/bin\n");
    // a name a shell would not keep, read without one
    const all = await runtime.exec(c.name, ["env"], { timeoutMs: 5000, maxBytes: 4096 });
    assert.ok(all.stdout.split("\n").includes("A.B=dots"), all.stdout);
    // no network at all: only the loopback interface
    const ifaces = await runtime.exec(c.name, ["ls", "/sys/class/net"], { timeoutMs: 5000, maxBytes: 4096 });
    assert.equal(ifaces.stdout.trim(), "lo");
  });

  test("exec bounds output and time; a timed-out command's processes are killed inside the container", async () => {
    const c = await runtime.create(spec("exec", v1, { command: ["sleep", "120"] }));
    const ok = await runtime.exec(c.name, ["sh", "-c", "echo out; echo err >&2; exit 3"], {
      timeoutMs: 5000,
      maxBytes: 100,
    });
    assert.deepEqual(ok, { exitCode: 3, stdout: "out\n", stderr: "err\n", truncated: false, timedOut: false });

    const big = await runtime.exec(c.name, ["sh", "-c", "yes | head -c 200000; yes e | head -c 300 >&2"], {
      timeoutMs: 10_000,
      maxBytes: 1000,
    });
    assert.equal(big.stdout.length, 1000);
    assert.equal(big.stderr.length, 300);
    assert.equal(big.truncated, true);
    assert.equal(big.timedOut, false);
    assert.equal(big.exitCode, 0);

    const started = Date.now();
    const slow = await runtime.exec(c.name, ["sh", "-c", "sleep 97 & echo begun; sleep 98"], {
      timeoutMs: 800,
      maxBytes: 1000,
    });
    assert.ok(Date.now() - started < 5000, "answered soon after the bound");
    assert.equal(slow.timedOut, true);
    assert.equal(slow.exitCode, TIMED_OUT_EXIT_CODE);
    assert.equal(slow.stdout, "begun\n");
    await new Promise((r) => setTimeout(r, 300));
    const ps = await runtime.exec(c.name, ["ps", "-o", "args"], { timeoutMs: 5000, maxBytes: 10_000 });
    assert.ok(!/sleep 9[78]/.test(ps.stdout), `the session's processes are gone:\n${ps.stdout}`);

    const missing = await runtime.exec(c.name, ["no-such-program"], { timeoutMs: 5000, maxBytes: 1000 });
    assert.equal(missing.exitCode, 127);
    await runtime.stop(c.name, 0);
    const after = await runtime.exec(c.name, ["true"], { timeoutMs: 5000, maxBytes: 10 }).catch((e) => e);
    assert.ok(after instanceof RuntimeError, JSON.stringify(after) + JSON.stringify(await runtime.inspect(c.name)));
  });

  test("logs merge stdout and stderr in order; stats report CPU over the interval, memory and pids", async () => {
    const c = await runtime.create(
      spec("logs", v1, {
        command: ["sh", "-c", "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; while true; do :; done"],
        limits: { cpus: 0.5, memoryMb: 64, pids: 64 },
      }),
    );
    const lines = await waitFor("three log lines", async () => {
      const l = await runtime.logs(c.name, 100);
      return l.length >= 3 && l;
    });
    assert.deepEqual(lines, ["one", "two", "three"]);
    assert.deepEqual(await runtime.logs(c.name, 2), ["two", "three"]);
    assert.deepEqual(await runtime.logs(`${PREFIX}-nothing`, 5), []);
    await runtime.stats(c.name);
    await new Promise((r) => setTimeout(r, 1500));
    const s = await runtime.stats(c.name);
    assert.ok(s, "stats of a running container");
    // a busy loop limited to half a CPU
    assert.ok(s.cpuPercent > 25 && s.cpuPercent < 70, `cpu ${s.cpuPercent}`);
    assert.ok(s.memoryBytes > 0);
    assert.equal(s.memoryLimitBytes, 64 * 1024 * 1024);
    assert.ok(s.pids >= 1);
    await runtime.stop(c.name, 0);
    assert.equal(await runtime.stats(c.name), null);
    assert.equal(await runtime.health(c.name), false);
  });

  test("list finds containers by all given labels; stop and remove are idempotent", async () => {
    await runtime.create(spec("l1", v1, { command: ["sleep", "60"], labels: { ...LABEL, app: "a", gen: "1" } }));
    await runtime.create(spec("l2", v1, { command: ["sleep", "60"], labels: { ...LABEL, app: "a", gen: "2" } }));
    await runtime.create(spec("l3", v1, { command: ["sleep", "60"], labels: { ...LABEL, app: "b", gen: "1" } }));
    const names = async (labels: Record<string, string>) =>
      (await runtime.list({ ...LABEL, ...labels })).map((c) => c.name).sort();
    assert.deepEqual(await names({ app: "a" }), [`${PREFIX}-l1`, `${PREFIX}-l2`]);
    assert.deepEqual(await names({ app: "a", gen: "1" }), [`${PREFIX}-l1`]);
    assert.deepEqual(await names({ app: "c" }), []);
    await runtime.stop(`${PREFIX}-l1`, 0);
    await runtime.stop(`${PREFIX}-l1`, 0);
    const [stopped] = await runtime.list({ ...LABEL, app: "a", gen: "1" });
    assert.equal(stopped.status, "exited");
    assert.equal(stopped.address, null);
    const restarted = await runtime.start(`${PREFIX}-l1`);
    assert.equal(restarted.status, "running");
    await runtime.remove(`${PREFIX}-l1`);
    await runtime.remove(`${PREFIX}-l1`);
    await runtime.stop(`${PREFIX}-l1`);
    assert.deepEqual(await names({ app: "a" }), [`${PREFIX}-l2`]);
  });

  test("a timeout makes podman itself kill and delete the container", async () => {
    const c = await runtime.create(
      spec("timeout", v1, { entrypoint: ["sleep"], command: ["300"], timeoutSeconds: 2, autoRemove: true }),
    );
    assert.equal(c.status, "running");
    await waitFor("the container deleted", async () => (await runtime.inspect(c.name)) === null, 10_000);
  });

  test("refusals: bad specs, missing images and a GPU this host does not have", async () => {
    const refused = async (p: Promise<unknown>, kind: string, text: RegExp) => {
      await assert.rejects(p, (err: unknown) => {
        assert.ok(err instanceof RuntimeError, String(err));
        assert.equal(err.kind, kind);
        assert.match(err.message, text);
        return true;
      });
    };
    await refused(runtime.create(spec("Bad_Name", v1)), "bad_spec", /container name/);
    await refused(runtime.create(spec("flag", "--privileged")), "bad_spec", /image reference/);
    await refused(runtime.create(spec("env", v1, { env: { "A=B": "x" } })), "bad_spec", /environment/);
    await refused(runtime.create(spec("port", v1, { port: 8080, network: null })), "bad_spec", /network/);
    await refused(
      runtime.create(spec("mount", v1, { mounts: [{ source: "relative", target: "/x" }] })),
      "bad_spec",
      /absolute/,
    );
    await refused(runtime.create(spec("absent", "localhost/platform-test/absent:1")), "image_pull", /absent/);
    await refused(
      runtime.create(spec("gpu", v1, { limits: { cpus: 1, memoryMb: 64, pids: 64, gpu: "A100-80GB" } })),
      "no_capacity",
      /no GPU.*A100-80GB/,
    );
    assert.equal(new RuntimeError("x", "no_capacity").toApiError().code, "provision_failed");
    assert.deepEqual(await runtime.list({ ...LABEL, never: "made" }), []);
    assert.equal(await runtime.inspect(`${PREFIX}-absent`), null, "nothing left behind");
  });

  test("unavailable: a sentence with the install command where podman is missing; RUNTIME is checked", async () => {
    const missing = new PodmanRuntime({ bin: "/nonexistent/podman" });
    const why = await missing.unavailable();
    assert.match(why!, /not available.*apt-get install podman runc/);
    assert.equal(await createRuntime({}).unavailable(), null);
    assert.equal(createRuntime({}), createRuntime({ RUNTIME: "local" }), "one provider per process");
    assert.match((await createRuntime({ PODMAN_BIN: "/nonexistent/podman" }).unavailable())!, /apt-get install/);
    assert.throws(() => createRuntime({ RUNTIME: "kubernetes" }), /RUNTIME must be one of local/);
    // the probe checks rootful podman with runc
    assert.ok(readFileSync("/proc/self/status", "utf8").includes("Uid:\t0"), "tests run as root");
  });
});
