/**
 * `npm run bench:apps-chaos` (not in CI): pods under kill -9 (issue 33).
 *
 * CHAOS_RUNS (5) runs; each drives a mixed workload through the HTTP API of a real platform process
 * (src/main.ts) while the platform is SIGKILLed CHAOS_KILLS (4) times at random moments and started again:
 * pod creates, image patches, stop/start, restart, delete, a group of 2 replicas. Every request cut by a kill is
 * retried once the platform is back, POSTs with the same Idempotency-Key. After the last kill it reports:
 *
 *  - duplicates: pods or groups beyond the workload's (one create made twice);
 *  - orphan containers after convergence: labelled containers of this host that are not exactly each live pod's
 *    one container of its current generation (older generations, removed pods, second containers);
 *  - convergence: seconds from the last restart (its API answering) until every pod's containers match its row
 *    (given up after CHAOS_CAP_S, 180).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, readFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { createPool } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";
import { AREAS } from "../src/areas.js";
import { freePort } from "../src/pgserver/cluster.js";
import { buildBusyboxImage } from "../src/runtime/images.js";
import { printTable } from "./lib/report.js";

const run = promisify(execFile);
const RUNS = Number(process.env.CHAOS_RUNS ?? 5);
const KILLS = Number(process.env.CHAOS_KILLS ?? 4);
/** convergence is given up after this long (reported as "> CAP_S") */
const CAP_S = Number(process.env.CHAOS_CAP_S ?? 180);
const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

const root = await mkdtemp(path.join(os.tmpdir(), "chaos-apps-"));
await chmod(root, 0o755);
const images: string[] = [];
for (const v of ["1", "2"]) {
  const tag = `localhost/platform-bench/chaos:${v}`;
  await buildBusyboxImage({
    tag,
    files: { "/www/index.html": `v${v}\n` },
    cmd: ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"],
  });
  images.push(tag);
}

interface Platform {
  child: ChildProcess;
  base: string;
}

async function oneRun(n: number) {
  const store = await startEmbeddedServer(path.join(root, `store-${n}`), "platform");
  const pool = createPool(store.url, 2);
  await migrate(pool, AREAS);
  await pool.end();
  const port = await freePort();
  const dataDir = path.join(root, `data-${n}`);
  const env = {
    PATH: process.env.PATH!,
    DATABASE_URL: store.url,
    DATA_DIR: dataDir,
    PORT: String(port),
    EDGE_PORT: "0", // a port of its own each start (a killed process's port may still be held by its children)
    EDGE_PROCESS: "inline",
    EDGE_TLS_PORT: "0",
    REGISTRY_PORT: "0",
    LOG_LEVEL: "warn",
    RATE_LIMIT_RPS: "1000000",
    APPS_ALLOW_LOCAL_IMAGES: "1",
    APPS_SWEEP_MS: "1000",
    APPS_DRAIN_MS: "1000",
  };
  const base = `http://127.0.0.1:${port}`;
  let platform: Platform | null = null;
  let restartedAt = 0;
  const launch = async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr!.on("data", (d) => (err = (err + d).slice(-2000)));
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL" && signal !== "SIGTERM") log(`run ${n}: platform exited ${code}: ${err}`);
    });
    platform = { child, base };
    for (let i = 0; i < 3000; i++) {
      if (
        await fetch(`${base}/v1/edition`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
    restartedAt = Date.now();
  };
  const killNow = async () => {
    const p = platform!;
    const exited = new Promise((r) => p.child.once("exit", r));
    p.child.kill("SIGKILL");
    await exited;
    await launch();
  };

  let token = "";
  /** one request, retried through kills until it gets an answer (POSTs keep their Idempotency-Key) */
  const api = async (method: string, url: string, body?: unknown) => {
    const key = method === "POST" ? randomUUID() : null;
    const giveUp = Date.now() + 600_000;
    for (;;) {
      try {
        const res = await fetch(base + url, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body ? { "content-type": "application/json" } : {}),
            ...(key ? { "idempotency-key": key } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(30_000),
        });
        const json = (await res.json().catch(() => null)) as any;
        // the key's first request still in flight (cut by the kill): retry; 5xx from a dying process: retry
        if (res.status === 409 && json?.error?.code === "idempotency_in_progress") throw new Error("in progress");
        if (res.status >= 500) throw new Error(`${res.status}`);
        return { status: res.status, json };
      } catch {
        if (Date.now() > giveUp) throw new Error(`${method} ${url} never answered`);
        await sleep(200);
      }
    }
  };

  await launch();
  token = (await api("POST", "/v1/auth/signup", { email: `chaos${n}@example.com`, password: "long enough pw" })).json
    .token;
  const [v1, v2] = images as [string, string];
  const pods: Record<string, string> = {};
  const steps: (() => Promise<unknown>)[] = [];
  for (const name of ["alpha", "beta", "gamma", "delta"])
    steps.push(async () => {
      const r = await api("POST", "/v1/pods", { name, image: v1, port: 8080 });
      if (r.status === 201) pods[name] = r.json.id;
      else log(`run ${n}: create ${name}: ${r.status} ${JSON.stringify(r.json)}`);
    });
  steps.push(() =>
    api("POST", "/v1/pod-groups", { name: "chaos-group", image: v1, port: 8080, replica_min: 2, replica_max: 2 }),
  );
  steps.push(() => api("PATCH", `/v1/pods/${pods.alpha}`, { image: v2 }));
  steps.push(() => api("POST", `/v1/pods/${pods.beta}/stop`));
  steps.push(() => api("POST", `/v1/pods/${pods.gamma}/restart`));
  steps.push(() => api("POST", `/v1/pods/${pods.beta}/start`));
  steps.push(() => api("DELETE", `/v1/pods/${pods.delta}`));
  steps.push(() => api("PATCH", `/v1/pods/${pods.gamma}`, { image: v2 }));
  steps.push(() => api("POST", `/v1/pods/${pods.alpha}/restart`));
  steps.push(() => api("PATCH", `/v1/pods/${pods.beta}`, { image: v2 }));
  steps.push(() => api("POST", `/v1/pods/${pods.gamma}/stop`));

  // the kills: at random moments while the workload runs
  const killer = (async () => {
    for (let k = 0; k < KILLS; k++) {
      await sleep(1000 + Math.random() * 3000);
      await killNow();
    }
  })();
  for (const step of steps) {
    await step();
    await sleep(Math.random() * 600);
  }
  await killer;

  // convergence: every live pod has exactly its current generation's container (running) or none when not running
  const hostId = (await readFile(path.join(dataDir, "host-id"), "utf8")).trim();
  let converged: number | null = null;
  let report = { duplicates: 0, orphans: 0 };
  const deadline = Date.now() + CAP_S * 1000;
  while (Date.now() < deadline) {
    report = await measure(api, hostId);
    const { stdout } = await run("podman", [
      "ps",
      "-a",
      "--filter",
      `label=platform.host=${hostId}`,
      "--format",
      "json",
    ]);
    const cs = JSON.parse(stdout || "[]") as { Labels: Record<string, string>; State: string }[];
    const list = (await api("GET", "/v1/pods")).json as any[];
    const ok =
      report.orphans === 0 &&
      list.every((p) => {
        const mine = cs.filter((c) => c.Labels["platform.pod"] === p.id);
        if (p.desired_state !== "running") return mine.length === 0 && p.state === p.desired_state;
        return (
          mine.length === 1 &&
          mine[0]!.Labels["platform.generation"] === String(p.generation) &&
          p.state === "running" &&
          p.serving_generation === p.generation
        );
      });
    if (ok) {
      converged = (Date.now() - restartedAt) / 1000;
      break;
    }
    await sleep(250);
  }
  const cleaned = ((await api("GET", "/v1/pods")).json as any[]).reduce((s, p) => s + (p.cleaned_containers ?? 0), 0);
  // tear down: every pod and group deleted, their containers gone, the process stopped
  for (const g of (await api("GET", "/v1/pod-groups")).json as any[]) await api("DELETE", `/v1/pod-groups/${g.id}`);
  for (const p of (await api("GET", "/v1/pods")).json as any[]) await api("DELETE", `/v1/pods/${p.id}`);
  for (let i = 0; i < 120; i++) {
    const { stdout } = await run("podman", ["ps", "-aq", "--filter", `label=platform.host=${hostId}`]);
    if (!stdout.trim()) break;
    await sleep(500);
  }
  const p = platform as Platform | null;
  p?.child.kill("SIGTERM");
  await new Promise((r) => p?.child.once("exit", r) ?? r(null));
  const { stdout } = await run("podman", ["ps", "-aq", "--filter", `label=platform.host=${hostId}`]);
  for (const id of stdout.split("\n").filter(Boolean)) await run("podman", ["rm", "-f", "-t", "0", id]).catch(() => {});
  await store.stop();
  return { ...report, converged, cleaned };
}

/** duplicates by name among live pods and groups; labelled containers not matching a live pod's current generation */
async function measure(
  api: (m: string, u: string) => Promise<{ status: number; json: any }>,
  hostId: string,
): Promise<{ duplicates: number; orphans: number }> {
  const pods = (await api("GET", "/v1/pods")).json as any[];
  const groups = (await api("GET", "/v1/pod-groups")).json as any[];
  const standalone = pods.filter((p) => !p.group_id);
  const names = new Map<string, number>();
  for (const p of standalone) names.set(p.name, (names.get(p.name) ?? 0) + 1);
  let duplicates = [...names.values()].reduce((s, c) => s + c - 1, 0);
  duplicates += Math.max(0, groups.length - 1);
  for (const g of groups) duplicates += Math.max(0, g.replicas.length - 2);
  const { stdout } = await run("podman", ["ps", "-a", "--filter", `label=platform.host=${hostId}`, "--format", "json"]);
  const cs = JSON.parse(stdout || "[]") as { Labels: Record<string, string> }[];
  const live = new Map(pods.filter((p) => p.desired_state === "running").map((p) => [p.id, p]));
  let orphans = 0;
  const seen = new Set<string>();
  for (const c of cs) {
    const p = live.get(c.Labels["platform.pod"] ?? "");
    const key = c.Labels["platform.pod"]!;
    if (!p || c.Labels["platform.generation"] !== String(p.generation) || seen.has(key)) orphans++;
    seen.add(key);
  }
  return { duplicates, orphans };
}

const rows: string[][] = [];
for (let n = 1; n <= RUNS; n++) {
  const r = await oneRun(n);
  log(`run ${n}: ${JSON.stringify(r)}`);
  rows.push([
    String(n),
    String(KILLS),
    String(r.duplicates),
    String(r.orphans),
    r.converged === null ? `> ${CAP_S}` : r.converged.toFixed(1),
    String(r.cleaned),
  ]);
}
log(`apps under kill -9: mixed workload, ${KILLS} kills a run`);
printTable(["run", "kills", "duplicates", "orphan containers", "convergence s", "cleaned up"], rows);
process.exit(0);
