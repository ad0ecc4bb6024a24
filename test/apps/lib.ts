import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { call, createTestApp, freshDatabase, type TestApp, type TestAppOptions } from "../helpers/app.js";
import { freePort } from "../../src/pgserver/cluster.js";
import { api, until as waitUntil, type Proc } from "../hosts/lib.js";

const run = promisify(execFile);

/** A test platform whose apps worker reacts fast: short sweeps, a short drain, few crashes before failed. */
export function createAppsTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  return createTestApp({
    startJobs: true,
    ...opts,
    env: {
      // test images live in the host's local store (built once per run by test/run.ts)
      APPS_ALLOW_LOCAL_IMAGES: "1",
      APPS_SWEEP_MS: "500",
      APPS_DRAIN_MS: "300",
      APPS_MAX_CRASHES: "3",
      EDGE_PORT: "0",
      REGISTRY_PORT: "0",
      ...opts.env,
    },
  });
}

/** Polls GET /v1/pods/{id} until `until` holds (bounded). */
export async function waitPod(t: TestApp, token: string, id: string, until: (p: any) => boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  let last: any;
  while (Date.now() < deadline) {
    const res = await call(t.app, { url: `/v1/pods/${id}`, token });
    last = res.json();
    if (res.statusCode === 200 && until(last)) return last;
    await new Promise((r) => setTimeout(r, 150));
  }
  assert.fail(`pod ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

export async function createPod(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await call(t.app, { method: "POST", url: "/v1/pods", token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** GET over plain HTTP (the pod's loopback address or the edge). */
export async function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}

/** The platform's containers of a pod, as podman lists them. */
export async function containersOf(podId: string): Promise<{ Id: string; Names: string[]; State: string }[]> {
  const { stdout } = await run("podman", ["ps", "-a", "--filter", `label=platform.pod=${podId}`, "--format", "json"]);
  return JSON.parse(stdout || "[]");
}

/** A real platform process's pods deleted through its API, waited for (30 s at most) until no container is left. */
export async function removePodsAndWait(platform: Proc, token: string, ids: string[]): Promise<void> {
  for (const id of ids) await api(platform, "DELETE", `/v1/pods/${id}`, token).catch(() => null);
  await waitUntil(
    "pods removed",
    async () => {
      for (const id of ids) if ((await containersOf(id)).length) return undefined;
      return true;
    },
    30_000,
  ).catch(() => null);
}

/**
 * What a real platform process (src/main.ts, started with `launch`) of an apps test runs on: a fresh database, a
 * data directory of its own, free API and edge ports, no TLS listener, a registry on any port, local test images.
 */
export async function realPlatform(name: string, extra: Record<string, string> = {}) {
  const database = await freshDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), `platform-${name}-`));
  chmodSync(dataDir, 0o755);
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    EDGE_PORT: String(await freePort()),
    EDGE_TLS_PORT: "0",
    REGISTRY_PORT: "0",
    OPERATOR_TOKEN: `operator-token-for-${name}-test`,
    APPS_ALLOW_LOCAL_IMAGES: "1",
    ...extra,
  };
  return { database, dataDir, env };
}
