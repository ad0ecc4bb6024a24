/**
 * The host agent as its own process on this machine, installed by following install.shell (the download step
 * pointed at this checkout with AGENT_SOURCE_DIR, apt skipped, the agent in the foreground instead of a systemd
 * unit). It gets no store credentials, only PLATFORM_URL and the bootstrap token: it registers → online, runs a
 * company pod scheduled to it, is killed (SIGKILL) → offline and the pod unknown, and started again → online with
 * its container adopted, not duplicated; the edge serves the pod at the reported address, and stops while the host
 * is offline. Prints the register→online and placement→running times.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { call, createTestApp, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import { ownerNetworkName } from "../../src/runtime/index.js";
import { request } from "../edge/lib.js";
import { makeOrg, ORG, type TestOrg } from "./lib.js";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PREFIX = `t-agent-${randomBytes(3).toString("hex")}-`;

let t: TestApp;
let org: TestOrg;
let stateDir: string;
let edgePort = 0;
const APPS_DOMAIN = "apps.agent.test";
let hostId = "";
let shell = "";
const agents: ChildProcess[] = [];
const output: string[] = [];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Runs install.shell as the admin was told to, in a clean environment: no DATABASE_URL, no platform secrets. */
function install(): ChildProcess {
  const child = spawn("sh", ["-c", shell], {
    detached: true, // its own process group: SIGKILL reaches the agent, which replaced the script
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AGENT_SOURCE_DIR: process.cwd(),
      AGENT_SKIP_APT: "1",
      AGENT_FOREGROUND: "1",
      AGENT_STATE_DIR: stateDir,
      AGENT_NAME_PREFIX: PREFIX,
      AGENT_LABELS: "zone=test",
      AGENT_PASS_MS: "250",
      AGENT_DRAIN_MS: "300",
      AGENT_MAX_CRASHES: "2",
    },
  });
  for (const s of [child.stdout!, child.stderr!]) s.on("data", (d: Buffer) => output.push(d.toString()));
  agents.push(child);
  return child;
}

const kill = (child: ChildProcess) => {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // gone already
  }
};

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await get();
    if (ok(last)) return last;
    await sleep(50);
  }
  assert.fail(`${what}: not reached; last ${JSON.stringify(last)}\nagent output:\n${output.join("").slice(-4000)}`);
}

const host = async () => (await call(t.app, { url: `/v1/org/hosts/${hostId}`, token: org.admins[0].token })).json();
const pod = async (id: string) =>
  (await call(t.app, { url: `/v1/pods/${id}`, token: org.members[0].token, headers: ORG })).json();
async function containers(podId: string): Promise<{ Id: string; Names: string[]; State: string }[]> {
  const { stdout } = await run("podman", ["ps", "-a", "--filter", `label=platform.pod=${podId}`, "--format", "json"]);
  return JSON.parse(stdout || "[]");
}

before(async () => {
  const port = await freePort();
  edgePort = await freePort();
  stateDir = await mkdtemp(path.join(os.tmpdir(), "agent-state-"));
  t = await createTestApp({
    startJobs: true,
    env: {
      APPS_ALLOW_LOCAL_IMAGES: "1",
      HOST_HEARTBEAT_SECONDS: "1",
      HOST_MISSED_BEATS: "2",
      AGENT_PLATFORM_URL: `http://127.0.0.1:${port}`,
      EDGE_PORT: String(edgePort),
      EDGE_TLS_PORT: "0",
      APPS_DOMAIN,
    },
  });
  await t.app.listen({ host: "127.0.0.1", port });
  org = await makeOrg(t, { admins: 1, members: 1 });
  // company sites are public here, so the edge answers without a sign-in
  const open = await call(t.app, {
    method: "PATCH",
    url: "/v1/org",
    token: org.admins[0].token,
    body: { default_visibility: "public" },
  });
  assert.equal(open.statusCode, 200, open.body);
});

after(async () => {
  for (const a of agents) kill(a);
  if (hostId) {
    const { stdout } = await run("podman", ["ps", "-aq", "--filter", `label=platform.host=${hostId}`]);
    const ids = stdout.split("\n").filter(Boolean);
    if (ids.length) await run("podman", ["rm", "-f", "-t", "0", ...ids]).catch(() => null);
  }
  if (org) await run("podman", ["network", "rm", ownerNetworkName({ kind: "org", id: org.id })]).catch(() => null);
  await rm(stateDir, { recursive: true, force: true });
  await t?.close();
});

describe("host agent", () => {
  test("installed by install.shell: registers, runs a pod, goes offline when killed, adopts its container when back", async () => {
    const image = await testImage("TEST_IMAGE_HTTPD_V1");
    const made = await call(t.app, {
      method: "POST",
      url: "/v1/org/hosts",
      token: org.admins[0].token,
      body: { name: "agent-box", region: "local" },
    });
    assert.equal(made.statusCode, 201, made.body);
    hostId = made.json().host.id;
    shell = made.json().install.shell;

    const installed = Date.now();
    const first = install();
    const online = await until("online", host, (h) => h.status === "online");
    const registerMs = Date.now() - installed;
    assert.equal(online.labels.zone, "test");
    assert.ok(online.capacity.cpus >= 1);

    const placed = Date.now();
    const created = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: org.members[0].token,
      headers: ORG,
      body: { name: "on-agent", image, port: 8080, host_labels: { zone: "test" } },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id;
    assert.equal(created.json().host_id, hostId);
    const running = await until(
      "pod running",
      () => pod(id),
      (p) => p.state === "running",
    );
    const placementMs = Date.now() - placed;
    console.log(`host agent: register→online ${registerMs} ms, placement→running ${placementMs} ms`);
    const cs = await containers(id);
    assert.equal(cs.length, 1);
    assert.ok(cs[0].Names[0].startsWith(PREFIX), cs[0].Names[0]);
    const served = await fetch(`http://${running.address}/`, { signal: AbortSignal.timeout(5000) });
    assert.equal((await served.text()).trim(), "v1");
    // and through the edge, at the address the agent reported
    const site = `${running.slug}.${APPS_DOMAIN}`;
    const atEdge = await until(
      "edge serves the pod",
      () => request(edgePort, site),
      (a) => a.status === 200,
      10_000,
    );
    assert.equal(atEdge.body.trim(), "v1");
    assert.equal((await host()).active_pods, 1);

    // killed: the host turns offline, the pod unknown (not served); its container keeps running under conmon
    kill(first);
    await until("offline", host, (h) => h.status === "offline", 20_000);
    const lost = await until(
      "pod unknown",
      () => pod(id),
      (p) => p.state === "unknown",
      20_000,
    );
    assert.match(lost.state_reason, /offline/);
    assert.equal(lost.address, null);
    assert.equal((await containers(id))[0].State, "running");
    await until(
      "edge stops routing",
      () => request(edgePort, site),
      (a) => a.status === 503,
      10_000,
    );

    // back (the same install command: the token is used up, the stored credential is what counts): adopted
    const second = install();
    await until("online again", host, (h) => h.status === "online");
    const back = await until(
      "pod running again",
      () => pod(id),
      (p) => p.state === "running",
    );
    assert.equal(back.address, running.address);
    await until(
      "edge serves again",
      () => request(edgePort, site),
      (a) => a.status === 200,
      10_000,
    );
    await sleep(1000); // a few passes more: still one container, the same one
    const after = await containers(id);
    assert.equal(after.length, 1);
    assert.equal(after[0].Id, cs[0].Id);

    // a pod whose program exits is restarted with back-off, then failed with its exit code and last lines
    const crashing = await call(t.app, {
      method: "POST",
      url: "/v1/pods",
      token: org.members[0].token,
      headers: ORG,
      body: { name: "crashes", image, command: ["/bin/busybox", "sh", "-c", "echo boom; exit 3"], host_id: hostId },
    });
    assert.equal(crashing.statusCode, 201, crashing.body);
    const failed = await until(
      "pod failed",
      () => pod(crashing.json().id),
      (p) => p.state === "failed",
      30_000,
    );
    assert.match(failed.state_reason, /exited with code 3.*boom.*not restarted again/);
    assert.equal(failed.restart_count, 2);
    assert.equal((await containers(crashing.json().id)).length, 0);
    const removed = await call(t.app, {
      method: "DELETE",
      url: `/v1/pods/${crashing.json().id}`,
      token: org.members[0].token,
      headers: ORG,
    });
    assert.equal(removed.statusCode, 202, removed.body);

    // a new generation rolls on the agent too, then the pod is deleted and the host can go
    const patched = await call(t.app, {
      method: "PATCH",
      url: `/v1/pods/${id}`,
      token: org.members[0].token,
      headers: ORG,
      body: { env: { V: "2" } },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    await until(
      "generation 2 serving",
      () => pod(id),
      (p) => p.serving_generation === 2 && p.state === "running",
    );
    await until(
      "old generation drained",
      () => containers(id),
      (c) => c.length === 1 && c[0].Id !== cs[0].Id,
    );
    const del = await call(t.app, {
      method: "DELETE",
      url: `/v1/pods/${id}`,
      token: org.members[0].token,
      headers: ORG,
    });
    assert.equal(del.statusCode, 202, del.body);
    await until(
      "containers removed",
      () => containers(id),
      (c) => c.length === 0,
    );
    await until(
      "pod removed",
      () => pod(id),
      (p) => p.state === "removed",
    );
    const gone = await call(t.app, { method: "DELETE", url: `/v1/org/hosts/${hostId}`, token: org.admins[0].token });
    assert.equal(gone.statusCode, 200, gone.body);
    // its credential dies with it: the agent stops (exit 78, which the systemd unit does not restart)
    const code = await new Promise<number | null>((r) =>
      second.exitCode !== null ? r(second.exitCode) : second.on("exit", (c) => r(c)),
    );
    assert.equal(code, 78, output.join("").slice(-2000));
  });
});
