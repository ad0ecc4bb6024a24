import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import path from "node:path";
import { testImage } from "../helpers/images.js";
import { api, kill, launch, until, type Proc } from "../hosts/lib.js";
import { containersOf, realPlatform, removePodsAndWait } from "./lib.js";

const run = promisify(execFile);

/** podman's state of the container with that name, or null once it is gone */
async function stateOf(name: string): Promise<string | null> {
  const { stdout } = await run("podman", ["ps", "-a", "--filter", `name=^${name}$`, "--format", "{{.State}}"]);
  return stdout.trim() || null;
}

/**
 * A removal cut half-way, as a kill of the platform in the middle of `podman rm` leaves it: a container of the
 * pod (labelled like its generation 0) whose `podman rm` is SIGKILLed, tried until podman says `removing`.
 */
async function halfRemoved(image: string, podId: string, hostId: string): Promise<string | null> {
  const name = `pod-${podId.replace(/-/g, "").slice(0, 16)}-g0`;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (!(await stateOf(name)))
      await run("podman", [
        ...["run", "-d", "--runtime", "runc", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=20000:20000"],
        ...["--name", name, "--label", `platform.pod=${podId}`, "--label", `platform.host=${hostId}`],
        ...["--label", "platform.generation=0", image],
      ]);
    const rm = spawn("podman", ["--runtime", "runc", "rm", "--force", "--time", "0", name], { stdio: "ignore" });
    const exited = new Promise((r) => rm.once("exit", r));
    // podman says `removing` once it has begun deleting: the kill lands then (watched, not timed)
    let state = await stateOf(name);
    while (state && state !== "removing" && rm.exitCode === null) state = await stateOf(name);
    rm.kill("SIGKILL");
    await exited;
    if ((await stateOf(name)) === "removing") return name;
  }
  // a loaded machine may never show the window: the container's rm finished every time (then it is simply gone)
  process.stderr.write("could not cut a podman rm half-way; the test goes on without a removing container\n");
  return null;
}

/**
 * Issue 33: a rollout cut by kill -9 of the platform at any step, and a removal cut half-way, leave each pod with
 * exactly its one container once the platform is back; the pod counts what had to be cleaned up.
 */
test("kill -9 between a rollout's steps and during a removal: after restart each pod has exactly its container", async () => {
  const [v1, v2] = [await testImage("TEST_IMAGE_HTTPD_V1"), await testImage("TEST_IMAGE_HTTPD_V2")];
  const { database, dataDir, env } = await realPlatform("rollout-kill", {
    APPS_SWEEP_MS: "500",
    // the old generation serves this long beside the new one: the kill lands in that window
    APPS_DRAIN_MS: "20000",
  });
  const up = async (name: string) => {
    const p = launch(name, env);
    await until(
      "the API",
      async () => ((await api(p, "GET", "/v1/edition")).status === 200 ? true : undefined),
      300_000,
    );
    return p;
  };
  let platform: Proc = await up("rollout-kill");
  const ids: string[] = [];
  let token = "";
  const pod = async (id: string) => (await api(platform, "GET", `/v1/pods/${id}`, token)).json;
  try {
    token = (
      await api(platform, "POST", "/v1/auth/signup", undefined, {
        email: "cut@example.com",
        password: "long enough pw",
      })
    ).json.token;
    for (const name of ["cut-created", "cut-draining"]) {
      const res = await api(platform, "POST", "/v1/pods", token, { name, image: v1, port: 8080 });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      ids.push(res.json.id);
    }
    const [created, draining] = ids as [string, string];
    for (const id of ids)
      await until(`pod ${id} running`, async () => (await pod(id)).state === "running" || undefined);

    // 1: killed right after the new generation's container exists
    assert.equal((await api(platform, "PATCH", `/v1/pods/${created}`, token, { image: v2 })).status, 200);
    await until(
      "generation 2's container",
      async () => (await containersOf(created)).some((c) => c.Names[0]!.endsWith("-g2")) || undefined,
    );
    await kill(platform, "SIGKILL");

    // 2: killed while the new generation serves and the old one drains, before its removal
    platform = await up("rollout-kill-2");
    assert.equal((await api(platform, "PATCH", `/v1/pods/${draining}`, token, { image: v2 })).status, 200);
    await until("generation 2 serving", async () =>
      (await pod(draining)).serving_generation === 2 ? true : undefined,
    );
    await kill(platform, "SIGKILL");
    const both = await containersOf(draining);
    assert.equal(
      both.length,
      2,
      `both generations are there when it dies: ${JSON.stringify(both.map((c) => c.Names))}`,
    );
    // 3: a removal of one of its containers cut half-way (podman `removing`)
    const hostId = readFileSync(path.join(dataDir, "host-id"), "utf8").trim();
    const cut = await halfRemoved(v1, draining, hostId);
    const left = (await containersOf(draining)).map((c) => c.Id);
    assert.equal(left.length, cut ? 3 : 2);

    platform = await up("rollout-kill-3");
    for (const id of ids)
      await until(
        `pod ${id} converged to its one container`,
        async () => {
          const cs = await containersOf(id);
          const p = await pod(id);
          return (cs.length === 1 && cs[0]!.Names[0]!.endsWith("-g2") && p.state === "running" && p) || undefined;
        },
        90_000,
      );
    for (const id of ids) {
      const p = await pod(id);
      assert.equal(p.serving_generation, 2);
      assert.equal((await fetch(`http://${p.address}/`).then((r) => r.text())).trim(), "v2");
    }
    if (cut) assert.equal(await stateOf(cut), null, "the half-removed container is gone");
    const counted = (await pod(draining)).cleaned_containers;
    assert.ok(counted >= (cut ? 2 : 1), `the old generation and the half-removed one counted (${counted})`);
    const { stdout } = await run("ps", ["-eo", "args"]);
    const kept = (await containersOf(draining))[0]!.Id;
    for (const id of left.filter((id) => id !== kept))
      assert.ok(!stdout.includes(id), `no conmon or runc of the removed container ${id} is left`);
  } catch (err) {
    process.stderr.write(`pods: ${JSON.stringify(await Promise.all(ids.map(pod)).catch(() => null))}\n`);
    const { stdout } = await run("podman", ["ps", "-a", "--format", "{{.Names}} {{.State}}"]);
    process.stderr.write(`containers: ${stdout}\nerror: ${(err as Error).message}\n`);
    throw err;
  } finally {
    await removePodsAndWait(platform, token, ids);
    await kill(platform, "SIGTERM");
    for (const id of ids)
      for (const c of await containersOf(id)) await run("podman", ["rm", "-f", "-t", "0", c.Id]).catch(() => null);
    await database.drop();
  }
});
