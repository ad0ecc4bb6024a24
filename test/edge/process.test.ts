/**
 * `npm start` without ROLES forks the edge as a process of its own (src/edge/process.ts): the API process does
 * not listen on EDGE_PORT itself, the edge process does, and it goes when its parent goes, by SIGTERM or kill -9.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../src/pgserver/cluster.js";
import { TEST_SECRET_KEY, freshDatabase } from "../helpers/app.js";
import { kill, launch, until, type Proc } from "../hosts/lib.js";
import { request } from "./lib.js";

/** the pids of the processes whose parent is pid */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function startForking(
  dir: string,
  databaseUrl: string,
): Promise<{ proc: Proc; edgePort: number; edgePid: number }> {
  const [port, edgePort] = [await freePort(), await freePort()];
  const proc = launch("forking", {
    DATA_DIR: dir,
    // the test's store rather than an embedded one, which a kill -9 of its starter would leave running
    DATABASE_URL: databaseUrl,
    PLATFORM_SECRET_KEY: TEST_SECRET_KEY,
    OPERATOR_TOKEN: "edge-process-operator-token-0123",
    PORT: String(port),
    EDGE_PORT: String(edgePort),
    EDGE_TLS_PORT: "0",
    EDGE_PROCESS: "separate",
    APPS_DOMAIN: "apps.process.test",
  });
  await until("the edge process to answer", async () =>
    (await request(edgePort, "nothing.apps.process.test")).status === 404 ? true : undefined,
  );
  const edgePid = childrenOf(proc.child.pid!).find((pid) => {
    const cmd = execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8" });
    return cmd.includes("src/main.ts");
  });
  assert.ok(edgePid, "a forked main.ts beside the API process");
  return { proc, edgePort, edgePid };
}

test("npm start: the edge runs in a forked process, which stops with its parent (SIGTERM or kill -9)", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "edge-process-"));
  const database = await freshDatabase();
  let proc: Proc | null = null;
  try {
    const first = await startForking(dir, database.url);
    proc = first.proc;
    // the API answers on its own port, the unknown host's 404 page came from the other process
    const version = await fetch(`${first.proc.base}/v1/edition`);
    assert.equal(version.status, 200);
    await kill(first.proc, "SIGTERM");
    assert.equal(first.proc.child.exitCode, 0, first.proc.log());
    await until("the edge process to stop", async () => (alive(first.edgePid) ? undefined : true), 15_000);

    // the same data directory again (the edge's host identity lives in DATA_DIR/edge), then a kill -9
    const second = await startForking(dir, database.url);
    proc = second.proc;
    await kill(second.proc, "SIGKILL");
    await until("the orphaned edge to go", async () => (alive(second.edgePid) ? undefined : true), 15_000);
    await assert.rejects(request(second.edgePort, "nothing.apps.process.test"));
  } finally {
    if (proc) await kill(proc, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  }
});
