import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freshDatabase } from "../helpers/app.js";
import { freePort } from "../../src/pgserver/cluster.js";
import { api, kill, launch, until } from "../hosts/lib.js";
import { busyboxContext, processesMentioning } from "./lib.js";

/**
 * A build running when the platform dies (kill -9) is never left `building`: the restarted platform marks it
 * failed with that reason, kills the builder the dead platform left behind and removes its working directory.
 */
test("kill -9 during a build: after restart the build is failed, its leftover builder killed", async () => {
  const database = await freshDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-builds-"));
  chmodSync(dataDir, 0o755);
  const env = {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    REGISTRY_PORT: "0",
    OPERATOR_TOKEN: "operator-token-for-builds-restart",
    BUILD_POLL_MS: "200",
  };
  let platform = launch("builds", env);
  try {
    await until("the API", async () => ((await api(platform, "GET", "/v1/edition")).status === 200 ? true : undefined));
    const { token } = (
      await api(platform, "POST", "/v1/auth/signup", undefined, {
        email: "builds@example.com",
        password: "long enough pw",
      })
    ).json;
    const created = await api(platform, "POST", "/v1/builds", token, {});
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const build = created.json;
    const archive = await busyboxContext(
      `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sh", "-c", "echo sleeping; /bin/busybox sleep 300"]\n`,
    );
    const put = await fetch(build.upload_url, { method: "PUT", body: new Uint8Array(archive) });
    assert.equal(put.status, 200, await put.text());
    assert.equal((await api(platform, "POST", `/v1/builds/${build.id}/start`, token)).status, 202);
    await until("the RUN step sleeping", async () => {
      const b = (await api(platform, "GET", `/v1/builds/${build.id}`, token)).json;
      return b.status === "building" && /^sleeping$/m.test(b.logs) ? b : undefined;
    });
    const workDir = path.join(dataDir, "builds", build.id);

    await kill(platform, "SIGKILL");
    // the builder outlives the platform that started it
    assert.ok((await processesMentioning(workDir)).length > 0, "the builder is still running");

    platform = launch("builds-again", env);
    const failed = await until("the build marked failed", async () => {
      const res = await api(platform, "GET", `/v1/builds/${build.id}`, token).catch(() => null);
      return res?.status === 200 && res.json.status !== "building" ? res.json : undefined;
    });
    assert.equal(failed.status, "failed");
    assert.equal(failed.status_reason, "the platform stopped during the build");
    await until("the leftover builder gone", async () =>
      (await processesMentioning(workDir)).length === 0 ? true : undefined,
    );
    await until("its working directory removed", async () => (existsSync(workDir) ? undefined : true), 10_000);
  } finally {
    await kill(platform, "SIGTERM");
    await database.drop();
    await rm(dataDir, { recursive: true, force: true }).catch(() => {});
  }
});
