/**
 * `npm run bench:buckets`: the S3 gateway beside plain file writes and reads of the same bytes, in the same run.
 *
 *  - PUT and GET throughput (MB/s) of 1 MiB objects (BENCH_SMALL_COUNT, default 64) and 64 MiB objects
 *    (BENCH_LARGE_COUNT, default 4), one request at a time, signed with AWS Signature V4 (UNSIGNED-PAYLOAD, as
 *    SDKs send over HTTPS) by the AWS signer;
 *  - small-object operations per second: 4 KiB PUTs, then GETs of random ones, BENCH_CONCURRENCY (default 16) at
 *    once for BENCH_SECONDS (default 5) each;
 *  - gateway and files take turns (object by object; one-second slices for small objects), so load from
 *    anything else on the machine slows both alike;
 *  - the same bytes written to files with fsync (what the gateway guarantees before it answers) and read back,
 *    and the small files the same way at the same concurrency;
 *  - a bare node:http server storing the same objects as files (bench/lib/bare-object-server.ts: no auth, no
 *    store), driven by the same client: the plain files have no HTTP at all, and on these 2 cores a node HTTP
 *    server and its client alone reach about a quarter of them for 4 KiB and 1 MiB objects, so "gateway / bare
 *    http" is what the gateway itself costs;
 *  - nginx over a directory (bench/lib/nginx-objects.ts: WebDAV PUT without fsync, sendfile GET), where installed:
 *    "nginx / files" is how near plain files the fastest common HTTP server gets on this machine.
 *
 * The platform runs as a real process (src/main.ts, ROLES=api,s3) over an embedded control store; its storage
 * directory and the plain files share one filesystem.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, open, readFile, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Hash } from "@smithy/hash-node";
import { SignatureV4 } from "@smithy/signature-v4";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { createPool } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";
import { AREAS } from "../src/areas.js";
import { freePort } from "../src/pgserver/cluster.js";
import { printTable } from "./lib/report.js";
import { startNginxObjects } from "./lib/nginx-objects.js";

const MiB = 1024 * 1024;
const SMALL_COUNT = Number(process.env.BENCH_SMALL_COUNT ?? 64);
const LARGE_COUNT = Number(process.env.BENCH_LARGE_COUNT ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
if (![SMALL_COUNT, LARGE_COUNT, CONCURRENCY, SECONDS].every((n) => Number.isInteger(n) && n > 0))
  throw new Error("BENCH_SMALL_COUNT, BENCH_LARGE_COUNT, BENCH_CONCURRENCY and BENCH_SECONDS are positive integers");
const log = (msg: string) => process.stderr.write(`${msg}\n`);

const root = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "bench-buckets-"));
await chmod(root, 0o755); // the embedded store's system user passes through
const store = await startEmbeddedServer(path.join(root, "store"), "platform");
const pool = createPool(store.url, 2);
await migrate(pool, AREAS);
await pool.end();

const port = await freePort();
const s3Port = await freePort();
// BENCH_PROF=<dir>: the platform writes a CPU profile there when it stops
const profile = process.env.BENCH_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
const child = spawn(process.execPath, [...profile, "--import", "tsx", "src/main.ts"], {
  env: {
    PATH: process.env.PATH!,
    DATABASE_URL: store.url,
    DATA_DIR: path.join(root, "platform"),
    PORT: String(port),
    S3_PORT: String(s3Port),
    ROLES: "api,s3",
    LOG_LEVEL: "warn",
    RATE_LIMIT_RPS: "1000000",
    ...(process.env.S3_DIGEST_WORKERS ? { S3_DIGEST_WORKERS: process.env.S3_DIGEST_WORKERS } : {}),
  },
  stdio: ["ignore", "inherit", "inherit"],
});
const base = `http://127.0.0.1:${port}`;
let stopBare = () => {};
let stopNginx = async () => {};

async function api(method: string, url: string, token?: string, body?: unknown) {
  const res = await fetch(base + url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
}

try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/v1/edition`).catch(() => null))?.status === 200) break;
    if (i > 600) throw new Error("the platform did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  const token = (
    await api("POST", "/v1/auth/signup", undefined, { email: "bench@example.com", password: "long enough pw" })
  ).json.token;
  const bucket = (await api("POST", "/v1/buckets", token, { name: "bench-bucket" })).json.name as string;
  const key = (await api("POST", "/v1/buckets/keys", token, { name: "bench", permission: "read_write" })).json;
  const signer = new SignatureV4({
    service: "s3",
    region: "us-east-1",
    credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
    sha256: Hash.bind(null, "sha256"),
    uriEscapePath: false,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const host = `127.0.0.1:${s3Port}`;

  /** The signed headers of a request: signing is the client's CPU, so the small-object slices sign before timing. */
  async function signedHeaders(method: "PUT" | "GET", p: string, size?: number) {
    const headers: Record<string, string> = { host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };
    if (size !== undefined) headers["content-length"] = String(size);
    return (await signer.sign({ method, protocol: "http:", hostname: host, path: p, query: {}, headers })).headers;
  }
  const presigned = new Map<string, Record<string, string>>();
  async function presign(method: "PUT" | "GET", objectKey: string, size?: number): Promise<void> {
    const p = `/${bucket}/${objectKey}`;
    presigned.set(`${method} ${p}`, await signedHeaders(method, p, size));
  }

  /** One signed request; resolves with the status and the number of body bytes received. */
  async function s3(method: "PUT" | "GET", objectKey: string, body?: Buffer, target = s3Port): Promise<number> {
    const p = `/${bucket}/${objectKey}`;
    const ready = target === s3Port ? presigned.get(`${method} ${p}`) : undefined;
    // a GET's signature may be sent again (S3 accepts it within 15 minutes); a PUT's is used once
    if (ready && method === "PUT") presigned.delete(`${method} ${p}`);
    const signed = { headers: ready ?? (await signedHeaders(method, p, body?.length)) };
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: target, method, path: p, headers: signed.headers, agent },
        (res) => {
          let n = 0;
          res.on("data", (c: Buffer) => (n += c.length));
          res.on("end", () =>
            // nginx's WebDAV PUT answers 201 or 204
            res.statusCode! >= 200 && res.statusCode! < 300
              ? resolve(n)
              : reject(new Error(`${method} ${p}: ${res.statusCode}`)),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  const plainDir = path.join(root, "plain");
  const barePort = await freePort();
  const bare = spawn(
    process.execPath,
    ["--import", "tsx", "bench/lib/bare-object-server.ts", path.join(root, "bare"), String(barePort)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    bare.stdout.once("data", () => resolve());
    bare.once("exit", (code) => reject(new Error(`the bare object server exited (${code})`)));
  });
  stopBare = () => bare.kill();
  // nginx (WebDAV PUT, sendfile GET) as a third reference, where it is installed
  const nginx = await startNginxObjects(path.join(root, "nginx"));
  if (nginx) stopNginx = nginx.stop;
  const ngx = async (fn: () => Promise<unknown>) => (nginx ? await timed(fn) : NaN);
  await mkdir(plainDir, { recursive: true });
  async function plainWrite(name: string, data: Buffer): Promise<void> {
    const fh = await open(path.join(plainDir, name), "w");
    await fh.writeFile(data);
    await fh.sync();
    await fh.close();
  }

  const rows: string[][] = [];
  const loadAtStart = os.loadavg()[0].toFixed(1);
  const mbps = (bytes: number, ms: number) => bytes / MiB / (ms / 1000);
  const timed = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const ratio = (g: number, f: number) => `${(g / f).toFixed(2)}×`;
  // CPU the platform process spent (all its threads), read around the gateway's requests only
  const cpu = { ms: 0 };
  const cpuNow = async () => {
    const f = (await readFile(`/proc/${child.pid}/stat`, "utf8")).split(") ")[1].split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in ticks of 10 ms
  };
  const gw = async <T>(fn: () => Promise<T>): Promise<T> => {
    const c0 = await cpuNow();
    const out = await fn();
    cpu.ms += (await cpuNow()) - c0;
    return out;
  };
  const cpuCell = (ms: number, per: number, unit: string) => `${(ms / per).toFixed(unit === "ms/MiB" ? 2 : 0)} ${unit}`;

  // gateway and files interleaved object by object, so a busy machine slows both alike
  for (const [label, size, count] of [
    ["1 MiB", MiB, SMALL_COUNT],
    ["64 MiB", 64 * MiB, LARGE_COUNT],
  ] as const) {
    const data = randomBytes(size);
    const total = size * count;
    log(`${label}: ${count} objects`);
    let [gwPut, fsPut, barePut, gwGet, fsGet, bareGet, ngxPut, ngxGet] = [0, 0, 0, 0, 0, 0, 0, 0];
    cpu.ms = 0;
    for (let i = 0; i < count; i++) {
      gwPut += await gw(() => timed(() => s3("PUT", `obj-${size}-${i}`, data)));
      fsPut += await timed(() => plainWrite(`obj-${size}-${i}`, data));
      barePut += await timed(() => s3("PUT", `obj-${size}-${i}`, data, barePort));
      ngxPut += await ngx(() => s3("PUT", `obj-${size}-${i}`, data, nginx!.port));
    }
    const putCpu = cpu.ms;
    cpu.ms = 0;
    for (let i = 0; i < count; i++) {
      gwGet += await gw(() =>
        timed(async () => {
          if ((await s3("GET", `obj-${size}-${i}`)) !== size) throw new Error("short read");
        }),
      );
      fsGet += await timed(async () => {
        if ((await readFile(path.join(plainDir, `obj-${size}-${i}`))).length !== size) throw new Error("short read");
      });
      bareGet += await timed(async () => {
        if ((await s3("GET", `obj-${size}-${i}`, undefined, barePort)) !== size) throw new Error("short read");
      });
      ngxGet += await ngx(async () => {
        if ((await s3("GET", `obj-${size}-${i}`, undefined, nginx!.port)) !== size) throw new Error("short read");
      });
    }
    rows.push([
      `PUT ${label} (MB/s)`,
      mbps(total, gwPut).toFixed(0),
      mbps(total, barePut).toFixed(0),
      mbps(total, ngxPut).toFixed(0),
      mbps(total, fsPut).toFixed(0),
      ratio(fsPut, gwPut),
      ratio(barePut, gwPut),
      ratio(fsPut, ngxPut),
      cpuCell(putCpu, total / MiB, "ms/MiB"),
    ]);
    rows.push([
      `GET ${label} (MB/s)`,
      mbps(total, gwGet).toFixed(0),
      mbps(total, bareGet).toFixed(0),
      mbps(total, ngxGet).toFixed(0),
      mbps(total, fsGet).toFixed(0),
      ratio(fsGet, gwGet),
      ratio(bareGet, gwGet),
      ratio(fsGet, ngxGet),
      cpuCell(cpu.ms, total / MiB, "ms/MiB"),
    ]);
  }

  // small objects: operations per second at CONCURRENCY, one-second slices of each in turn
  const small = randomBytes(4096);
  async function slice(fn: (worker: number) => Promise<unknown>): Promise<[number, number]> {
    let done = 0;
    const t0 = performance.now();
    const until = t0 + 1000;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        while (performance.now() < until) {
          await fn(w);
          done++;
        }
      }),
    );
    return [done, performance.now() - t0];
  }
  const gwCount = new Map<number, number>();
  const fsCount = new Map<number, number>();
  const bareCount = new Map<number, number>();
  const ngxCount = new Map<number, number>();
  const next = (m: Map<number, number>, w: number) => {
    const i = m.get(w) ?? 0;
    m.set(w, i + 1);
    return i;
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => mkdir(path.join(plainDir, `small-${w}`))));
  log(`4 KiB objects: ${CONCURRENCY} at once, ${SECONDS} s per case`);
  const tally = {
    ...{ gwPut: [0, 0], fsPut: [0, 0], barePut: [0, 0], ngxPut: [0, 0] },
    ...{ gwGet: [0, 0], fsGet: [0, 0], bareGet: [0, 0], ngxGet: [0, 0] },
  };
  const smallCpu = { put: 0, get: 0 };
  const add = (k: keyof typeof tally, [n, ms]: [number, number]) => {
    tally[k][0] += n;
    tally[k][1] += ms;
  };
  // the keys a PUT slice may reach, signed ahead (a worker past them signs inline)
  const PUTS_AHEAD = Number(process.env.BENCH_PUTS_AHEAD ?? 150);
  for (let s = 0; s < SECONDS; s++) {
    for (let w = 0; w < CONCURRENCY; w++)
      for (let i = 0, at = gwCount.get(w) ?? 0; i < PUTS_AHEAD; i++) await presign("PUT", `small/${w}/${at + i}`, 4096);
    cpu.ms = 0;
    add("gwPut", await gw(() => slice((w) => s3("PUT", `small/${w}/${next(gwCount, w)}`, small))));
    smallCpu.put += cpu.ms;
    add("fsPut", await slice((w) => plainWrite(`small-${w}/${next(fsCount, w)}`, small)));
    add("barePut", await slice((w) => s3("PUT", `small/${w}/${next(bareCount, w)}`, small, barePort)));
    if (nginx) add("ngxPut", await slice((w) => s3("PUT", `small/${w}/${next(ngxCount, w)}`, small, nginx.port)));
  }
  const pick = (m: Map<number, number>, w: number) => Math.floor(Math.random() * (m.get(w) ?? 1));
  presigned.clear();
  const picks = Array.from({ length: CONCURRENCY }, () => [] as number[]);
  for (let s = 0; s < SECONDS; s++) {
    // this slice's random keys, chosen and signed ahead
    for (let w = 0; w < CONCURRENCY; w++) {
      picks[w] = Array.from({ length: Number(process.env.BENCH_GETS_AHEAD ?? 400) }, () => pick(gwCount, w));
      for (const i of new Set(picks[w])) await presign("GET", `small/${w}/${i}`);
    }
    cpu.ms = 0;
    const cursor = new Array<number>(CONCURRENCY).fill(0);
    const nextPick = (w: number) => picks[w][cursor[w]++ % picks[w].length];
    add("gwGet", await gw(() => slice((w) => s3("GET", `small/${w}/${nextPick(w)}`))));
    smallCpu.get += cpu.ms;
    add("fsGet", await slice((w) => readFile(path.join(plainDir, `small-${w}`, String(pick(fsCount, w))))));
    add("bareGet", await slice((w) => s3("GET", `small/${w}/${pick(bareCount, w)}`, undefined, barePort)));
    if (nginx) add("ngxGet", await slice((w) => s3("GET", `small/${w}/${pick(ngxCount, w)}`, undefined, nginx.port)));
  }
  const ops = (k: keyof typeof tally) => tally[k][0] / (tally[k][1] / 1000);
  const perOp = (ms: number, k: "gwPut" | "gwGet") => cpuCell(ms * 1000, tally[k][0], "µs/op");
  rows.push([
    "PUT 4 KiB (ops/s)",
    ops("gwPut").toFixed(0),
    ops("barePut").toFixed(0),
    ops("ngxPut").toFixed(0),
    ops("fsPut").toFixed(0),
    ratio(ops("gwPut"), ops("fsPut")),
    ratio(ops("gwPut"), ops("barePut")),
    ratio(ops("ngxPut"), ops("fsPut")),
    perOp(smallCpu.put, "gwPut"),
  ]);
  rows.push([
    "GET 4 KiB (ops/s)",
    ops("gwGet").toFixed(0),
    ops("bareGet").toFixed(0),
    ops("ngxGet").toFixed(0),
    ops("fsGet").toFixed(0),
    ratio(ops("gwGet"), ops("fsGet")),
    ratio(ops("gwGet"), ops("bareGet")),
    ratio(ops("ngxGet"), ops("fsGet")),
    perOp(smallCpu.get, "gwGet"),
  ]);

  console.log(
    `\nS3 gateway beside plain files (fsync on write), ${os.cpus().length} cores, load average ${loadAtStart} at start, ${os.loadavg()[0].toFixed(1)} at end:\n`,
  );
  printTable(
    [
      "case",
      "gateway",
      "bare http",
      "nginx",
      "files",
      "gateway / files",
      "gateway / bare http",
      "nginx / files",
    ].concat("platform CPU"),
    rows,
  );
  agent.destroy();
} finally {
  stopBare();
  await stopNginx();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await store.stop();
  await rm(root, { recursive: true, force: true });
}
