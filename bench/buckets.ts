/**
 * `npm run bench:buckets`: the S3 gateway beside plain file writes and reads of the same bytes, in the same run.
 *
 *  - PUT and GET throughput (MB/s) of 1 MiB objects (BENCH_SMALL_COUNT, default 64) and 64 MiB objects
 *    (BENCH_LARGE_COUNT, default 4), one request at a time, signed with AWS Signature V4 (UNSIGNED-PAYLOAD, as
 *    SDKs send over HTTPS) by the AWS signer;
 *  - small-object operations per second: 4 KiB PUTs, then GETs, BENCH_CONCURRENCY (default 16) at once for
 *    BENCH_SECONDS (default 5) each;
 *  - the same bytes written to files with fsync (what the gateway guarantees before it answers) and read back,
 *    and the small files the same way at the same concurrency.
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
import { freePort } from "../src/pgserver/cluster.js";
import { printTable } from "./lib/report.js";

const MiB = 1024 * 1024;
const SMALL_COUNT = Number(process.env.BENCH_SMALL_COUNT ?? 64);
const LARGE_COUNT = Number(process.env.BENCH_LARGE_COUNT ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const log = (msg: string) => process.stderr.write(`${msg}\n`);

const root = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), "bench-buckets-"));
await chmod(root, 0o755); // the embedded store's system user passes through
const store = await startEmbeddedServer(path.join(root, "store"), "platform");
const pool = createPool(store.url, 2);
await migrate(pool);
await pool.end();

const port = await freePort();
const s3Port = await freePort();
const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
  env: {
    PATH: process.env.PATH!,
    DATABASE_URL: store.url,
    DATA_DIR: path.join(root, "platform"),
    PORT: String(port),
    S3_PORT: String(s3Port),
    ROLES: "api,s3",
    LOG_LEVEL: "warn",
    S3_TRACE: process.env.S3_TRACE ?? "",
    RATE_LIMIT_RPS: "1000000",
  },
  stdio: ["ignore", "inherit", "inherit"],
});
const base = `http://127.0.0.1:${port}`;

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

  /** One signed request; resolves with the status and the number of body bytes received. */
  async function s3(method: "PUT" | "GET", objectKey: string, body?: Buffer): Promise<number> {
    const p = `/${bucket}/${objectKey}`;
    const headers: Record<string, string> = { host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };
    if (body) headers["content-length"] = String(body.length);
    const signed = await signer.sign({ method, protocol: "http:", hostname: host, path: p, query: {}, headers });
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: s3Port, method, path: p, headers: signed.headers, agent },
        (res) => {
          let n = 0;
          res.on("data", (c: Buffer) => (n += c.length));
          res.on("end", () =>
            res.statusCode === 200 ? resolve(n) : reject(new Error(`${method} ${p}: ${res.statusCode}`)),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  const plainDir = path.join(root, "plain");
  await mkdir(plainDir, { recursive: true });
  async function plainWrite(name: string, data: Buffer): Promise<void> {
    const fh = await open(path.join(plainDir, name), "w");
    await fh.writeFile(data);
    await fh.sync();
    await fh.close();
  }

  const rows: string[][] = [];
  const mbps = (bytes: number, ms: number) => bytes / MiB / (ms / 1000);
  const timed = async (fn: () => Promise<void>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };

  for (const [label, size, count] of [
    ["1 MiB", MiB, SMALL_COUNT],
    ["64 MiB", 64 * MiB, LARGE_COUNT],
  ] as const) {
    const data = randomBytes(size);
    const total = size * count;
    log(`${label}: ${count} objects`);
    const gwPut = await timed(async () => {
      for (let i = 0; i < count; i++) await s3("PUT", `obj-${size}-${i}`, data);
    });
    const fsPut = await timed(async () => {
      for (let i = 0; i < count; i++) await plainWrite(`obj-${size}-${i}`, data);
    });
    const gwGet = await timed(async () => {
      for (let i = 0; i < count; i++) if ((await s3("GET", `obj-${size}-${i}`)) !== size) throw new Error("short read");
    });
    const fsGet = await timed(async () => {
      for (let i = 0; i < count; i++)
        if ((await readFile(path.join(plainDir, `obj-${size}-${i}`))).length !== size) throw new Error("short read");
    });
    for (const [op, gw, fs] of [
      ["PUT", gwPut, fsPut],
      ["GET", gwGet, fsGet],
    ] as const) {
      const g = mbps(total, gw);
      const f = mbps(total, fs);
      rows.push([`${op} ${label} (MB/s)`, g.toFixed(0), f.toFixed(0), `${(g / f).toFixed(2)}×`]);
    }
  }

  // small objects: operations per second at CONCURRENCY
  const small = randomBytes(4096);
  async function opsPerSecond(fn: (worker: number, i: number) => Promise<unknown>): Promise<number> {
    let done = 0;
    const until = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let i = 0; performance.now() < until; i++) {
          await fn(w, i);
          done++;
        }
      }),
    );
    return done / ((performance.now() - t0) / 1000);
  }
  const written = new Map<number, number>();
  log(`4 KiB objects: ${CONCURRENCY} at once, ${SECONDS} s per case`);
  const gwSmallPut = await opsPerSecond(async (w, i) => {
    await s3("PUT", `small/${w}/${i}`, small);
    written.set(w, i + 1);
  });
  const gwSmallGet = await opsPerSecond((w, i) => s3("GET", `small/${w}/${i % (written.get(w) ?? 1)}`));
  const fsWritten = new Map<number, number>();
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => mkdir(path.join(plainDir, `small-${w}`))));
  const fsSmallPut = await opsPerSecond(async (w, i) => {
    await plainWrite(`small-${w}/${i}`, small);
    fsWritten.set(w, i + 1);
  });
  const fsSmallGet = await opsPerSecond((w, i) =>
    readFile(path.join(plainDir, `small-${w}`, String(i % (fsWritten.get(w) ?? 1)))),
  );
  rows.push([
    "PUT 4 KiB (ops/s)",
    gwSmallPut.toFixed(0),
    fsSmallPut.toFixed(0),
    `${(gwSmallPut / fsSmallPut).toFixed(2)}×`,
  ]);
  rows.push([
    "GET 4 KiB (ops/s)",
    gwSmallGet.toFixed(0),
    fsSmallGet.toFixed(0),
    `${(gwSmallGet / fsSmallGet).toFixed(2)}×`,
  ]);

  console.log(`\nS3 gateway beside plain files (fsync on write), ${os.cpus().length} cores, one run:\n`);
  printTable(["case", "gateway", "files", "gateway / files"], rows);
  agent.destroy();
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await store.stop();
  await rm(root, { recursive: true, force: true });
}
