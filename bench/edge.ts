/**
 * `npm run bench:edge`: requests/s and latency through the edge, beside Debian's nginx doing the same work in the
 * same run (issue 11, "Tests and figures"):
 *
 *  - edge → pod: GET / with `Host: <slug>.<APPS_DOMAIN>` on the edge's port, to a pod created through the API (a
 *    node hello server in a container, keep-alive); nginx → pod: the same request to an nginx proxying to the
 *    same pod's address over keep-alive upstream connections, setting the same forwarding headers;
 *  - edge static: the same page (BENCH_STATIC_BYTES of HTML) deployed as a static site through /v1/static and
 *    served by the edge; nginx static: that file from a `root`. Skipped with a line saying so while the platform
 *    has no /v1/static (POST answers 404).
 *
 * nginx is configured by this benchmark (bench/lib/nginx.ts: `worker_processes auto`, access log off, upstream
 * keepalive) in a temporary directory and stopped at the end. The platform runs as `npm start` does (API, jobs
 * and edge in one node process over its embedded PostgreSQL). autocannon runs in this process. On a 2-core
 * machine everything shares the same two cores: the ratio to nginx, measured a few seconds apart, is the figure
 * to compare; each row prints where the CPU went (% of one core).
 *
 * Settings (environment): BENCH_DURATION (10 s per measured run), BENCH_WARMUP (2 s discarded before each),
 * BENCH_CONNECTIONS (64; the targets are stated at 64), BENCH_STATIC_BYTES (8192), BENCH_POD_SIZE (cpu-small:
 * the pod is not what limits either proxy; the account is credited through the operator API for it),
 * BENCH_CPU_PROF_DIR (the platform runs with --cpu-prof and writes its profile there).
 *
 * Targets (PASS/MISS, never failing the run): the edge at least 0.5× nginx's requests/s, its CPU per answer at most
 * 2× nginx's (the figure contention moves least, issue 34), p99 under 20 ms.
 * Any non-2xx answer or connection error during a measured run makes the run INVALID (exit 1).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { buildBusyboxImage } from "../src/runtime/images.js";
import { nodeFiles } from "../test/apps/node-pg-image.js";
import { envNumber, loadFromEnv, measure, type LoadOptions, type Sample } from "./lib/measure.js";
import { childWithEnv, cpuProbe, postmasterPid, type CpuProbe } from "./lib/cpu.js";
import { type Child, freePort, startPlatform } from "./lib/processes.js";
import { nginxInstalled, startNginx } from "./lib/nginx.js";
import { candidates, startCandidate } from "./lib/proxies.js";
import { api, containersOf, deployStatic, expect, get, HELLO, page, POD_IMAGE, until } from "./lib/edge-setup.js";

const run = promisify(execFile);
const MIN_RATIO = 0.5;
const MAX_P99_MS = 20;
const APPS_DOMAIN = "apps.bench.test";
const OPERATOR_TOKEN = randomBytes(24).toString("hex");

const load: LoadOptions = loadFromEnv();
const STATIC_BYTES = Math.round(envNumber("BENCH_STATIC_BYTES", 8192, 64));
const POD_SIZE = process.env.BENCH_POD_SIZE || "cpu-small";
const cpuProfDir = process.env.BENCH_CPU_PROF_DIR ? path.resolve(process.env.BENCH_CPU_PROF_DIR) : null;
const log = (msg: string) => console.log(msg);
/** BENCH_EDGE_PLANE: the platform's edge measured with the nginx data plane (default) or the Node edge alone */
const EDGE_PLANE = process.env.BENCH_EDGE_PLANE === "node" ? "node" : "nginx";

// ---- everything started here is stopped on every way out ----
const children: Child[] = [];
const tempDirs: string[] = [];
let cleanupPods: (() => Promise<void>) | null = null;
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await cleanupPods?.().catch((err) => process.stderr.write(`removing the pod: ${err}\n`));
    // the platform stops its embedded PostgreSQL on SIGTERM: wait for that before removing the data
    await Promise.all(children.map((c) => c.stop()));
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    process.stderr.write(`\n${signal}: stopping servers and removing temporary data...\n`);
    void cleanup().finally(() => process.exit(130));
  });

// ---- results ----
interface Row {
  label: string;
  sample: Sample | null;
  /** the CPU group doing the proxying or serving: its CPU time per answer is the figure contention moves least */
  server?: string;
  note?: string;
}
const rows: Row[] = [];
const fmtMs = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2));
const cpuLine = (s: Sample) =>
  Object.entries(s.cpu)
    .map(([n, p]) => `${n} ${Math.max(0, p).toFixed(0)}%`)
    .join(", ");

/** CPU microseconds the serving processes ("a+b": both groups) spent per 2xx answer */
const cpuPerAnswer = (s: Sample, server: string) =>
  (server.split("+").reduce((sum, g) => sum + (s.cpu[g] ?? NaN), 0) / 100 / s.rps) * 1e6;

/** the nginx master the edge process started (the nginx data plane), whose workers are its children */
function nginxChildOf(pid: number): number | null {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid && stat.includes("(nginx)")) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

async function bench(label: string, server: string, url: string, host: string, probe: CpuProbe): Promise<Sample> {
  const s = await measure(url, { host }, load, probe);
  const bad = s.non2xx || s.errors ? `  non2xx=${s.non2xx} errors=${s.errors} codes=[${s.statusCodes}]` : "";
  log(
    `  ${label.padEnd(20)} ${s.rps.toFixed(0).padStart(7)} rps  p50 ${fmtMs(s.p50).padStart(3)} ms  p99 ${fmtMs(s.p99).padStart(3)} ms  cpu: ${cpuLine(s)}${bad}`,
  );
  rows.push({ label, sample: s, server });
  return s;
}

/** the edge's CPU per answer at most this multiple of nginx's (issue 34) */
const MAX_CPU_RATIO = 2;

function verdict(edge: Sample, nginx: Sample, edgeGroup: string): string {
  const ratio = edge.rps / nginx.rps;
  const cpu = cpuPerAnswer(edge, edgeGroup) / cpuPerAnswer(nginx, "nginx");
  return (
    `${ratio.toFixed(2)}× nginx (≥ ${MIN_RATIO}: ${ratio >= MIN_RATIO ? "PASS" : "MISS"}), ` +
    `CPU per answer ${cpu.toFixed(2)}× nginx's (≤ ${MAX_CPU_RATIO}: ${cpu <= MAX_CPU_RATIO ? "PASS" : "MISS"}), ` +
    `p99 ${fmtMs(edge.p99)} ms (< ${MAX_P99_MS} ms: ${edge.p99 < MAX_P99_MS ? "PASS" : "MISS"})`
  );
}

/**
 * Issue 32's candidates beside nginx (BENCH_CANDIDATES: a comma list, or "none"; default every installed one),
 * judged by that issue's targets: ≥ 0.9× nginx's requests/s, ≤ 1.3× its CPU per answer, p99 ≤ 1.3× its p99.
 */
async function benchCandidates(
  tmp: string,
  upstream: string,
  host: string,
  www: string,
  groups: Parameters<typeof cpuProbe>[0],
  probe: CpuProbe,
  nginxPod: Sample,
  nginxStatic: Sample | null,
): Promise<string[]> {
  // the choice is made (src/edge/README.md): the candidates are measured again only when asked
  const wanted = (process.env.BENCH_CANDIDATES ?? "none").split(",");
  const judge = (label: string, s: Sample, ref: Sample, group: string) => {
    const [rps, cpu, p99] = [s.rps / ref.rps, cpuPerAnswer(s, group) / cpuPerAnswer(ref, "nginx"), s.p99 / ref.p99];
    const ok = rps >= 0.9 && cpu <= 1.3 && p99 <= 1.3;
    return `${label.padEnd(18)}${rps.toFixed(2)}× nginx rps, CPU ${cpu.toFixed(2)}× nginx's, p99 ${p99.toFixed(2)}× (${ok ? "PASS" : "MISS"})`;
  };
  const out: string[] = [];
  for (const c of candidates()) {
    if (!wanted.includes("all") && !wanted.includes(c.name)) continue;
    if (c.missing) {
      out.push(`${c.name}: not measured (${c.missing})`);
      continue;
    }
    const cand = await startCandidate(c.name, path.join(tmp, c.name), upstream, host, www);
    children.push(cand.child);
    groups[c.name] = { pid: cand.child.proc.pid, withChildren: true };
    log(`${c.name} ${cand.version}: proxy ${cand.proxyUrl}${cand.staticUrl ? `, static ${cand.staticUrl}` : ""}`);
    out.push(
      judge(`${c.name} → pod`, await bench(`${c.name} → pod`, c.name, cand.proxyUrl, host, probe), nginxPod, c.name),
    );
    if (cand.staticUrl && nginxStatic)
      out.push(
        judge(
          `${c.name} static`,
          await bench(`${c.name} static`, c.name, cand.staticUrl, "localhost", probe),
          nginxStatic,
          c.name,
        ),
      );
    else out.push(`${c.name} static: serves no files (a static site would go to a file server behind it)`);
    await cand.child.stop();
  }
  if (out.length) out.unshift("\ncandidates for the data plane (issue 32):");
  return out;
}

async function main(): Promise<void> {
  log(
    `edge benchmark: ${load.connections} connections, ${load.duration} s per run after ${load.warmup} s warm-up; ` +
      `node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? "?"}) shared by autocannon, ` +
      `the platform, nginx, the pod and PostgreSQL`,
  );
  if (loadavg()[0] > 1) log(`note: 1-minute load average is ${loadavg()[0].toFixed(2)}: the figures will be noisy`);
  if (!nginxInstalled()) throw new Error("nginx is not installed (apt-get install nginx-light)");
  const tmp = mkdtempSync(path.join(tmpdir(), "bench-edge-"));
  tempDirs.push(tmp);
  chmodSync(tmp, 0o755); // the embedded PostgreSQL and nginx's workers run unprivileged when we are root
  const dataDir = path.join(tmp, "data");

  log("building the pod image (this host's node, a hello server)...");
  await buildBusyboxImage({
    tag: POD_IMAGE,
    files: { ...(await nodeFiles()), "/app/hello.js": HELLO },
    cmd: ["/usr/local/bin/node", "/app/hello.js"],
  });

  const edgePort = await freePort();
  const edgeUrl = `http://127.0.0.1:${edgePort}`;
  let t0 = Date.now();
  const platform = await startPlatform({
    dataDir,
    rateLimitRps: 10_000_000,
    nodeArgs: cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : [],
    env: {
      EDGE_PORT: String(edgePort),
      APPS_DOMAIN,
      APPS_ALLOW_LOCAL_IMAGES: "1",
      OPERATOR_TOKEN,
      REGISTRY_PORT: "0",
      EDGE_DATA_PLANE: EDGE_PLANE,
    },
  });
  children.push(platform.child);
  const base = platform.url;
  log(`platform: API ${base}, edge ${edgeUrl} (ready in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);

  const account = await expect(base, "POST", "/v1/auth/signup", 201, undefined, {
    email: `bench-edge-${Date.now()}@example.com`,
    password: "bench-password-0123456789",
  });
  const token: string = account.token;
  await expect(base, "POST", `/v1/operator/accounts/${account.account.id}/credit`, 201, OPERATOR_TOKEN, {
    amount: 100_000_000,
    currency: "KRW",
    reason: "bench:edge pod",
  });
  t0 = Date.now();
  const pod = await expect(base, "POST", "/v1/pods", 201, token, {
    name: "bench-edge",
    image: POD_IMAGE,
    port: 8080,
    size: POD_SIZE,
  });
  cleanupPods = async () => {
    await api(base, "DELETE", `/v1/pods/${pod.id}`, token);
    await until("the pod's containers removed", 30_000, async () =>
      (await containersOf(pod.id)).length === 0 ? true : undefined,
    ).catch(async () => {
      for (const c of await containersOf(pod.id)) await run("podman", ["rm", "-f", "-t", "0", c.Id]);
    });
  };
  const running = await until("the pod running", 120_000, async () => {
    const p = await api(base, "GET", `/v1/pods/${pod.id}`, token);
    return p.json.state === "running" && p.json.address ? p.json : undefined;
  });
  const podHost = `${pod.slug}.${APPS_DOMAIN}`;
  let last = "";
  const hello = await until("the pod through the edge", 60_000, async () => {
    const r = await get(edgeUrl, podHost).catch((err) => ({ status: 0, body: String(err) }));
    last = `${r.status} ${r.body.slice(0, 200)}`;
    return r.status === 200 ? r.body : undefined;
  }).catch((err) => {
    throw new Error(`${err.message}; last answer: ${last}; pod: ${JSON.stringify(running)}`);
  });
  const [container] = await containersOf(pod.id);
  const podPid = Number((await run("podman", ["inspect", "--format", "{{.State.Pid}}", container.Id])).stdout.trim());
  log(`pod ${pod.slug} (${POD_SIZE}) at ${running.address}, serving through the edge in ${Date.now() - t0} ms`);

  const html = page(STATIC_BYTES);
  const www = path.join(tmp, "www");
  mkdirSync(www);
  writeFileSync(path.join(www, "index.html"), html);
  const site = await deployStatic(base, token, tmp, html);
  const siteHost = site ? `${site}.${APPS_DOMAIN}` : "";
  if (site) {
    await until("the static site through the edge", 10_000, async () =>
      (await get(edgeUrl, siteHost)).body === html ? true : undefined,
    );
    log(`static site ${site}: ${html.length} bytes of index.html, served by the edge`);
  } else log("static sites: POST /v1/static answers 404 (not merged yet): the static rows are skipped");

  const nginx = await startNginx(path.join(tmp, "nginx"), running.address, www);
  children.push(nginx.child);
  log(`nginx ${nginx.version}: proxy ${nginx.proxyUrl} → ${running.address}, static ${nginx.staticUrl}`);
  // the same answers on both sides before anything is measured
  if ((await get(nginx.proxyUrl, podHost)).body !== hello) throw new Error("nginx → pod answers differently");
  if ((await get(nginx.staticUrl, "localhost")).body !== html) throw new Error("nginx static answers differently");

  // `npm start` forks the edge as a process of its own (src/edge/process.ts): its CPU is the edge's figure
  const edgePid = childWithEnv(platform.child.proc.pid!, "ROLES=edge");
  // the nginx data plane: the edge's own nginx (a child of the edge process) counts as the edge's CPU
  const edgeNginx = EDGE_PLANE === "nginx" ? nginxChildOf(edgePid ?? platform.child.proc.pid!) : null;
  if (EDGE_PLANE === "nginx" && !edgeNginx)
    log("note: the edge runs without nginx (see the platform's log): Node edge");
  const edgeGroup = `${edgePid ? "edge" : "platform"}${edgeNginx ? "+edge-nginx" : ""}`;
  const groups: Parameters<typeof cpuProbe>[0] = {
    autocannon: { pid: process.pid },
    platform: { pid: platform.child.proc.pid },
    ...(edgePid ? { edge: { pid: edgePid } } : {}),
    ...(edgeNginx ? { "edge-nginx": { pid: edgeNginx, withChildren: true } } : {}),
    postgres: { pid: postmasterPid(dataDir), withChildren: true },
    nginx: { pid: nginx.child.proc.pid, withChildren: true },
    // the pod runs under podman-init: its app is a child
    pod: { pid: podPid, withChildren: true },
  };
  const probe = cpuProbe(groups);
  log("\nmeasuring (cpu in % of one core; elsewhere = the machine's other busy time):");
  // a fresh edge and a fresh upstream pool answer their first seconds slower: one discarded run first
  await measure(edgeUrl, { host: podHost }, { ...load, duration: Math.max(1, load.warmup), warmup: 0 });
  const nginxPod = await bench("nginx → pod", "nginx", nginx.proxyUrl, podHost, probe);
  const edgeName = edgeNginx ? "edge+nginx" : "edge";
  const edgePod = await bench(`${edgeName} → pod`, edgeGroup, edgeUrl, podHost, probe);
  let nginxStatic: Sample | null = null;
  let edgeStatic: Sample | null = null;
  if (site) {
    nginxStatic = await bench("nginx static file", "nginx", nginx.staticUrl, "localhost", probe);
    edgeStatic = await bench(`${edgeName} static`, edgeGroup, edgeUrl, siteHost, probe);
  } else {
    rows.push({ label: "nginx static file", sample: null, note: "skipped: the platform has no /v1/static yet" });
    rows.push({ label: "edge static file", sample: null, note: "skipped: the platform has no /v1/static yet" });
  }

  const judged = await benchCandidates(tmp, running.address, podHost, www, groups, probe, nginxPod, nginxStatic);

  log(
    `\n${"case".padEnd(20)}${"rps".padStart(8)}${"p50ms".padStart(7)}${"p99ms".padStart(7)}${"non2xx".padStart(8)}${"cpu µs/answer".padStart(25)}`,
  );
  for (const r of rows) {
    const s = r.sample;
    if (!s) log(`${r.label.padEnd(20)}  ${r.note}`);
    else
      log(
        r.label.padEnd(20) +
          s.rps.toFixed(0).padStart(8) +
          fmtMs(s.p50).padStart(7) +
          fmtMs(s.p99).padStart(7) +
          String(s.non2xx + s.errors).padStart(8) +
          `${cpuPerAnswer(s, r.server!).toFixed(0)} (${r.server})`.padStart(25),
      );
  }
  log(`\ntargets at ${load.connections} connections:`);
  log(`  edge → pod:       ${verdict(edgePod, nginxPod, edgeGroup)}`);
  log(
    `  edge static file: ${edgeStatic && nginxStatic ? verdict(edgeStatic, nginxStatic, edgeGroup) : "not measured"}`,
  );
  // issue 32's targets for the platform's own edge: ≥ 0.9× nginx's requests/s, ≤ 1.3× its CPU, p99 ≤ 1.3×
  const issue32 = (e: Sample, n: Sample) => {
    const [rps, cpu, p99] = [e.rps / n.rps, cpuPerAnswer(e, edgeGroup) / cpuPerAnswer(n, "nginx"), e.p99 / n.p99];
    const ok = rps >= 0.9 && cpu <= 1.3 && p99 <= 1.3;
    return `${rps.toFixed(2)}× nginx rps, CPU ${cpu.toFixed(2)}× nginx's, p99 ${p99.toFixed(2)}× (${ok ? "PASS" : "MISS"})`;
  };
  log(`  issue 32, ${edgeName} → pod: ${issue32(edgePod, nginxPod)}`);
  if (edgeStatic && nginxStatic) log(`  issue 32, ${edgeName} static: ${issue32(edgeStatic, nginxStatic)}`);
  for (const line of judged) log(`  ${line}`);
  const noisy = rows.filter((r) => (r.sample?.cpu.elsewhere ?? 0) > 25);
  if (noisy.length)
    log(
      `\nNOISY: other work used up to ${Math.max(...noisy.map((r) => r.sample!.cpu.elsewhere)).toFixed(0)}% CPU during ${noisy.length} runs; re-run on a quiet machine.`,
    );
  const bad = rows.filter((r) => r.sample && (r.sample.non2xx > 0 || r.sample.errors > 0));
  if (bad.length) {
    log(
      `\nINVALID: non-2xx answers or errors in: ${bad.map((r) => `${r.label} [${r.sample!.statusCodes}; errors ${r.sample!.errors}]`).join(", ")}`,
    );
    process.exitCode = 1;
  }
  if (cpuProfDir) log(`\nCPU profile of the platform (written when it stops): ${cpuProfDir}`);
}

try {
  await main();
} catch (err) {
  process.stderr.write(`benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
