/**
 * `npm run bench:apps`: pods through the platform beside bare podman, in the same run. Issue 29 adds two
 * figures: rollout time to a new healthy version (BENCH_ROLLOUTS, default 5; bare: start the new container and
 * wait until it answers), and requests lost through the edge under steady load during those rollouts (target 0).
 * Issue 30 adds wake on request after idle (BENCH_WAKES, default 5) beside `podman start` plus the first answer.
 *
 *  - create → serving: POST /v1/pods, then GET until state running and the pod's address answers HTTP
 *    (BENCH_PODS, default 20, one after another), beside `podman run -d` of the same image with the same
 *    flags the runtime uses until its published port answers, the two interleaved;
 *  - adoption: BENCH_ADOPT (default 50) pods running, the platform killed with SIGKILL and started again;
 *    the time its start-up sweep took to match every container to the store (logged by the apps area),
 *    and that no container was started again (same container ids before and after).
 *
 * The platform runs as a real process (src/main.ts) over an embedded control store. BENCH_ONLY (a comma list of
 * create, rollout, wake, adopt; unset: all) runs only those parts. Whatever throws, the platform process, this
 * run's containers and networks and the store are cleaned up (`finally`) before the error is reported.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { createPool } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";
import { freePort } from "../src/pgserver/cluster.js";
import { buildBusyboxImage } from "../src/runtime/images.js";
import { ms, pct, printTable } from "./lib/report.js";
import { rolloutFigures } from "./lib/apps-rollout.js";
import { WAKE_ENV, wakeFigures } from "./lib/apps-wake.js";

const run = promisify(execFile);
const PODS = Number(process.env.BENCH_PODS ?? 20);
const ADOPT = Number(process.env.BENCH_ADOPT ?? 50);
const ONLY = new Set(
  (process.env.BENCH_ONLY ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean),
);
const runs = (part: "create" | "rollout" | "wake" | "adopt") => ONLY.size === 0 || ONLY.has(part);
const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

const root = await mkdtemp(path.join(os.tmpdir(), "bench-apps-"));
await chmod(root, 0o755);
const store = await startEmbeddedServer(path.join(root, "store"), "platform");
/** pods this run created (their containers go in the `finally` if the platform could not remove them) */
const created = new Set<string>();
let platform: ChildProcess | null = null;
/** set by cleanUp: the platform's exit (code 0 after its SIGTERM handler) is expected then */
let stopping = false;
const rows: string[][] = [];
const image = "localhost/platform-bench/httpd:1";
try {
  const pool = createPool(store.url, 2);
  await migrate(pool);
  await pool.end();
  await buildBusyboxImage({
    tag: image,
    files: { "/www/index.html": "ok\n" },
    cmd: ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"],
  });

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH!,
    DATABASE_URL: store.url,
    DATA_DIR: path.join(root, "platform"),
    PORT: String(port),
    EDGE_PORT: String(await freePort()),
    REGISTRY_PORT: "0",
    S3_PORT: "0", // the object store is not measured here; a fixed port may be taken on a shared machine
    EDGE_TLS_PORT: "off", // nor TLS; 8443 may be taken by another platform on this machine
    LOG_LEVEL: "info",
    RATE_LIMIT_RPS: "1000000",
    APPS_ALLOW_LOCAL_IMAGES: "1",
    ...WAKE_ENV,
  };
  let adoptLog: Record<string, number> | null = null;
  function launch(): ChildProcess {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let buf = "";
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL" && signal !== "SIGTERM" && !stopping)
        log(`platform exited: code ${code} signal ${signal}; last output: ${buf.slice(-1500)}`);
    });
    child.stdout!.on("data", (d) => {
      buf += d;
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.includes("pods adopted")) adoptLog = JSON.parse(line);
        else if (/"level":(40|50|60)/.test(line)) log(`platform: ${line.slice(0, 2000)}`);
      }
    });
    return child;
  }
  async function api(method: string, url: string, token?: string, body?: unknown) {
    const res = await fetch(base + url, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json().catch(() => null)) as any;
    if (method === "POST" && url === "/v1/pods" && res.status === 201) created.add(json.id);
    return { status: res.status, json };
  }
  async function until<T>(
    what: string,
    fn: () => Promise<T | undefined>,
    timeoutMs = 120_000,
    everyMs = 10,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const v = await fn().catch(() => undefined);
      if (v !== undefined) return v;
      await sleep(everyMs);
    }
    throw new Error(`timed out: ${what}`);
  }
  const answers = async (address: string) => (await fetch(`http://${address}/`)).status === 200;

  platform = launch();
  await until(
    "the API",
    async () => ((await api("GET", "/v1/edition")).status === 200 ? true : undefined),
    60_000,
    100,
  );
  const token = (
    await api("POST", "/v1/auth/signup", undefined, { email: "bench@example.com", password: "long enough pw" })
  ).json.token;

  async function platformCreate(i: number): Promise<number> {
    const t0 = performance.now();
    const res = await api("POST", "/v1/pods", token, { name: `bench-pod-${i}`, image, port: 8080 });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.json)}`);
    const pod = await until("running", async () => {
      const p = (await api("GET", `/v1/pods/${res.json.id}`, token)).json;
      return p.state === "running" && p.address && (await answers(p.address)) ? p : undefined;
    });
    const took = performance.now() - t0;
    await api("DELETE", `/v1/pods/${pod.id}`, token);
    return took;
  }
  async function bareCreate(i: number): Promise<number> {
    const name = `bench-bare-${process.pid}-${i}`;
    const t0 = performance.now();
    await run("podman", [
      "run",
      "-d",
      "--name",
      name,
      "--runtime",
      "runc",
      "--ulimit",
      "nofile=20000:20000",
      "--ulimit",
      "nproc=20000:20000",
      "--cpus",
      "0.25",
      "--memory",
      "256m",
      "--pids-limit",
      "512",
      "-p",
      "127.0.0.1::8080",
      image,
    ]);
    const { stdout } = await run("podman", ["port", name, "8080/tcp"]);
    const address = stdout.trim().split("\n")[0]!;
    await until("bare answers", async () => ((await answers(address)) ? true : undefined));
    const took = performance.now() - t0;
    await run("podman", ["rm", "-f", "-t", "0", name]);
    return took;
  }

  const bare: number[] = [];
  const plat: number[] = [];
  for (let i = 0; runs("create") && i < PODS; i++) {
    bare.push(await bareCreate(i));
    plat.push(await platformCreate(i));
    log(`create ${i + 1}/${PODS}: platform ${Math.round(plat.at(-1)!)} ms, bare ${Math.round(bare.at(-1)!)} ms`);
  }
  if (plat.length)
    for (const q of [50, 95])
      rows.push([
        `create → serving p${q} (n=${PODS})`,
        ms(pct(plat, q)!),
        ms(pct(bare, q)!),
        `${(pct(plat, q)! / pct(bare, q)!).toFixed(2)}×`,
      ]);

  // issue 29: rollouts to a new healthy version under steady load through the edge (bench/lib/apps-rollout.ts)
  if (runs("rollout"))
    rows.push(
      ...(await rolloutFigures({
        api,
        until,
        answers,
        token,
        image,
        edgePort: env.EDGE_PORT,
        log,
        count: Number(process.env.BENCH_ROLLOUTS ?? 5),
      })),
    );

  // issue 30: wake on request after idle (bench/lib/apps-wake.ts)
  if (runs("wake"))
    rows.push(
      ...(await wakeFigures({
        api,
        until,
        answers,
        token,
        image,
        edgePort: env.EDGE_PORT,
        log,
        count: Number(process.env.BENCH_WAKES ?? 5),
      })),
    );

  // this run's pods only: other platforms (tests, other benches) may run containers on this machine too
  const containerIds = async (ours: Set<string>) =>
    (
      JSON.parse(
        (await run("podman", ["ps", "--filter", "label=platform.pod", "--format", "json"])).stdout || "[]",
      ) as {
        Id: string;
        Labels?: Record<string, string>;
      }[]
    )
      .filter((c) => ours.has(c.Labels?.["platform.pod"] ?? ""))
      .map((c) => c.Id)
      .sort();

  if (runs("adopt")) {
    log(`starting ${ADOPT} pods for the adoption run`);
    const ids: string[] = [];
    for (let i = 0; i < ADOPT; i++)
      ids.push((await api("POST", "/v1/pods", token, { name: `adopt-pod-${i}`, image, port: 8080 })).json.id);
    await until(
      "all running",
      async () => {
        const list = (await api("GET", "/v1/pods", token)).json as any[];
        return list.filter((p) => p.state === "running").length === ADOPT ? true : undefined;
      },
      600_000,
      500,
    );
    const ours = new Set(ids);
    const before = await containerIds(ours);
    platform.kill("SIGKILL");
    await new Promise((r) => platform!.once("exit", r));
    adoptLog = null;
    const t0 = performance.now();
    platform = launch();
    await until("the adoption sweep", async () => adoptLog ?? undefined, 300_000, 20);
    const restartToAdopted = performance.now() - t0;
    // the sweep runs before the API listens again
    await until(
      "the API again",
      async () => ((await api("GET", "/v1/edition")).status === 200 ? true : undefined),
      60_000,
      50,
    );
    const after = await containerIds(ours);
    const same = before.length === after.length && before.every((id, i) => id === after[i]);

    for (const id of ids) await api("DELETE", `/v1/pods/${id}`, token);
    await until("removed", async () => ((await containerIds(ours)).length === 0 ? true : undefined), 300_000, 500);
    rows.push(
      [`adopt ${ADOPT} running pods: start-up sweep`, ms(adoptLog!.ms!), "", ""],
      [`adopt ${ADOPT}: process start → adopted`, ms(restartToAdopted), "", ""],
      [
        `containers kept (no duplicate, none restarted)`,
        same ? `${after.length}/${before.length} same ids` : `CHANGED ${before.length}→${after.length}`,
        "",
        "",
      ],
    );
  }
} finally {
  await cleanUp();
}

/**
 * The platform stopped (SIGTERM, SIGKILL after 15 s), then what a failed step left: this run's pod containers
 * (the platform did not get to remove them), bare containers, and the networks they used once nothing else does
 * (`network rm` without --force refuses a network in use); then the store.
 */
async function cleanUp(): Promise<void> {
  const child = platform;
  stopping = true;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(killer);
  }
  const quiet = (args: string[]) =>
    run("podman", args).then(
      (r) => r.stdout,
      () => "",
    );
  const listed = JSON.parse((await quiet(["ps", "--all", "--format", "json"])) || "[]") as {
    Names?: string[];
    Networks?: string[];
    Labels?: Record<string, string> | null;
  }[];
  const left = listed.filter(
    (c) =>
      created.has(c.Labels?.["platform.pod"] ?? "") ||
      (c.Names?.[0]?.startsWith("bench-bare-") && c.Names[0].includes(String(process.pid))),
  );
  if (left.length) {
    log(`cleaning up ${left.length} container(s) this run left`);
    await quiet(["rm", "--force", "--time", "0", ...left.map((c) => c.Names![0]!)]);
    for (const n of new Set(left.flatMap((c) => c.Networks ?? [])))
      if (n.startsWith("plat-")) await quiet(["network", "rm", n]);
  }
  await store.stop().catch((err) => log(`store stop: ${(err as Error).message}`));
}

console.log(`\nbench:apps on ${os.cpus().length} cores, image ${image}\n`);
printTable(["figure", "platform", "bare podman run", "ratio"], rows);
