import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { freePort } from "../../src/kernel/free-port.js";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import type { RegistryState } from "../../src/registry/module.js";
import { Podman, unique } from "./lib.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("registry server: restarts, and API processes sharing one registry", () => {
  let t: TestApp;
  let second: TestApp;
  let podman: Podman;
  let user: { token: string; id: string };

  before(async () => {
    t = await createTestApp({ startJobs: true, env: { REGISTRY_PORT: "0" } });
    // another API process over the same store, on another host, running no registry of its own
    second = await createTestApp({ databaseUrl: t.url, env: { ROLES: "api" } });
    podman = await Podman.create();
    user = await signup(t.app);
  });
  after(async () => {
    await podman?.cleanup();
    await second?.close();
    await t?.close();
  });

  test("another API process finds the registry and its credentials and tokens are accepted", async () => {
    const res = await call(second.app, { method: "POST", url: "/v1/registry/credentials", token: user.token });
    assert.equal(res.statusCode, 201, res.body);
    const creds = res.json();
    const state = t.platform.state<RegistryState>("registry");
    assert.equal(creds.registry, state.process.address);
    assert.equal((await podman.login(creds.registry, creds.username, creds.password)).code, 0);
    const image = `${creds.registry}/${creds.namespace}/${unique("shared")}:1`;
    await podman.tag(await podman.build(), image);
    const push = await podman.push(image);
    assert.equal(push.code, 0, push.stderr);
    // listed by the second process, which signs its own tokens with the key the first one created
    const listed = await call(second.app, { url: "/v1/registry", token: user.token });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.equal(listed.json().repositories.length, 1);
  });

  test("a registry that dies is restarted on the same address", async () => {
    const state = t.platform.state<RegistryState>("registry");
    const address = state.process.address;
    const pidFile = path.join(t.config.dataDir, "registry", "registry.pid");
    const pid = Number(await readFile(pidFile, "utf8"));
    process.kill(pid, "SIGKILL");
    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      await sleep(100);
      const res = await call(t.app, { url: "/v1/registry", token: user.token });
      ok = res.statusCode === 200 && state.process.address === address;
    }
    assert.ok(ok, "the registry came back");
    assert.notEqual(Number(await readFile(pidFile, "utf8")), pid);
  });
});

describe("registry server: a registry left running by a killed platform", () => {
  let dataDir: string;
  let orphan: number;
  let t: TestApp | null = null;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "regorphan-"));
  });
  after(async () => {
    await t?.close();
    try {
      process.kill(orphan, "SIGKILL");
    } catch {
      // stopped by the platform, as it should be
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  test("is stopped at start, and the new registry takes its port", async () => {
    const port = await freePort();
    const env = { REGISTRY_PORT: String(port), DATA_DIR: dataDir };
    const first = await createTestApp({ startJobs: true, env });
    // what kill -9 of the platform leaves: the registry still serving, its pid file in place
    await first.platform.state<RegistryState>("registry").process.stop();
    const child = spawn("/usr/bin/docker-registry", ["serve", path.join(dataDir, "registry", "config.yml")], {
      detached: true,
      stdio: "ignore",
      env: { PATH: process.env.PATH! },
    });
    child.unref();
    orphan = child.pid!;
    await writeFile(path.join(dataDir, "registry", "registry.pid"), String(orphan));
    await first.close();
    for (let i = 0; i < 50 && (await fetch(`http://127.0.0.1:${port}/v2/`).catch(() => null)) === null; i++)
      await sleep(100);

    t = await createTestApp({ startJobs: true, env });
    assert.ok(!existsSync(`/proc/${orphan}`) || (await readFile(`/proc/${orphan}/stat`, "utf8")).includes(" Z "));
    const u = await signup(t.app);
    const creds = await call(t.app, { method: "POST", url: "/v1/registry/credentials", token: u.token });
    assert.equal(creds.statusCode, 201, creds.body);
    assert.equal(creds.json().registry, `127.0.0.1:${port}`);
    assert.equal((await call(t.app, { url: "/v1/registry", token: u.token })).statusCode, 200);
  });
});
