import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import path from "node:path";
import { testImage } from "../helpers/images.js";
import { api, kill, launch, until } from "../hosts/lib.js";
import { containersOf, httpGet, realPlatform, removePodsAndWait } from "./lib.js";

const run = promisify(execFile);

/**
 * Containers outlive the platform: kill -9 of the platform process leaves its pods serving, and the restarted
 * platform adopts them (same container, no duplicate) and removes a container no pod owns (an orphan).
 */
test("kill -9 of the platform leaves pods serving; after restart they are adopted with no duplicate and no orphan", async () => {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const { database, dataDir, env } = await realPlatform("adopt", {
    APPS_SWEEP_MS: "500",
  });
  let platform = launch("adopt", env);
  const ids: string[] = [];
  let token = "";
  try {
    await until("the API", async () => ((await api(platform, "GET", "/v1/edition")).status === 200 ? true : undefined));
    token = (
      await api(platform, "POST", "/v1/auth/signup", undefined, {
        email: "adopt@example.com",
        password: "long enough pw",
      })
    ).json.token;
    for (const name of ["adopt-one", "adopt-two", "adopt-three"]) {
      const res = await api(platform, "POST", "/v1/pods", token, { name, image, port: 8080 });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      ids.push(res.json.id);
    }
    const before = new Map<string, { id: string; address: string }>();
    for (const id of ids) {
      const pod = await until(`pod ${id} running`, async () => {
        const r = await api(platform, "GET", `/v1/pods/${id}`, token);
        return r.json.state === "running" ? r.json : undefined;
      });
      before.set(id, { id: (await containersOf(id))[0]!.Id, address: pod.address });
    }

    await kill(platform, "SIGKILL");
    // the platform is gone; its pods are not
    for (const id of ids) assert.equal((await httpGet(`http://${before.get(id)!.address}/`)).body, "v1\n");
    // an orphan: a container labelled for this host by a pod the store does not know (a crash between
    // creating a container and recording its pod would leave one)
    const hostId = readFileSync(path.join(dataDir, "host-id"), "utf8").trim();
    const orphanPod = randomUUID();
    await run("podman", [
      "run",
      "-d",
      "--runtime",
      "runc",
      "--ulimit",
      "nofile=20000:20000",
      "--ulimit",
      "nproc=20000:20000",
      "--name",
      `pod-${orphanPod.replace(/-/g, "").slice(0, 16)}-g1`,
      "--label",
      `platform.pod=${orphanPod}`,
      "--label",
      `platform.host=${hostId}`,
      "--label",
      "platform.generation=1",
      image,
    ]);
    assert.equal((await containersOf(orphanPod)).length, 1);

    platform = launch("adopt-again", env);
    await until("the API again", async () =>
      (await api(platform, "GET", "/v1/edition")).status === 200 ? true : undefined,
    );
    for (const id of ids) {
      const pod = (await api(platform, "GET", `/v1/pods/${id}`, token)).json;
      assert.equal(pod.state, "running");
      assert.equal(pod.address, before.get(id)!.address, "the same replica serves at the same address");
      const cs = await containersOf(id);
      assert.deepEqual(
        cs.map((c) => c.Id),
        [before.get(id)!.id],
        "adopted, not started again: no duplicate",
      );
    }
    for (const id of ids) assert.equal((await httpGet(`http://${before.get(id)!.address}/`)).body, "v1\n");
    await until(
      "the orphan removed",
      async () => ((await containersOf(orphanPod)).length === 0 ? true : undefined),
      30_000,
    );
  } finally {
    await removePodsAndWait(platform, token, ids);
    await kill(platform, "SIGTERM");
    await database.drop();
  }
});
