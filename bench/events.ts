/**
 * `npm run bench:events` (issue 31), in one run on an embedded control store:
 *  1. commit-to-delivery latency of webhooks: BENCH_EVENTS (10,000) events, each committed in a transaction of its
 *     own at BENCH_EVENTS_RATE per second (default 500), fanned out and delivered through the job queue to a local
 *     receiver; p50/p99/max of (arrival at the receiver − COMMIT returned). Target p99 < 1 s.
 *  2. edge throughput with metrics on against off: the metrics part of issue 31 fills `edgeThroughputWithMetrics`.
 */
import { mkdtemp, rm, chmod } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config/config.js";
import { MemoryRateLimitStore } from "../src/http/rate-limit.js";
import { createPlatform, startPlatform, stopPlatform } from "../src/kernel/platform.js";
import { AREAS } from "../src/areas.js";
import { loadSecretBox } from "../src/kernel/secrets.js";
import { JobQueue } from "../src/jobs/queue.js";
import { createPool, inTransaction } from "../src/store/db.js";
import { startEmbeddedServer } from "../src/store/embedded.js";
import { migrate } from "../src/store/migrate.js";
import { ensureTraversable } from "../src/pgserver/cluster.js";
import { postgresRunAs } from "../src/pgserver/system-user.js";
import { recordEvent } from "../src/events/public.js";
import { accountOwner } from "../src/kernel/owner.js";
import { ms, pct, printTable } from "./lib/report.js";
import { measure } from "./lib/measure.js";
import { randomUUID } from "node:crypto";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const RATE = Number(process.env.BENCH_EVENTS_RATE ?? 500);
const log = (m: string) => process.stderr.write(`${m}\n`);

async function webhookLatency(rows: string[][]): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "bench-events-"));
  await chmod(root, 0o755);
  await ensureTraversable(root, postgresRunAs());
  const store = await startEmbeddedServer(path.join(root, "store"), "platform");
  const db = createPool(store.url, 60); // the bench's committers, the dispatcher and the first-attempt senders
  await migrate(db, AREAS);
  const env = {
    LOG_LEVEL: "silent",
    RATE_LIMIT_RPS: "1000000",
    DATA_DIR: path.join(root, "instances"),
    REGISTRY_PORT: "0",
    EDGE_PORT: "0",
    S3_PORT: "0",
    OUTBOUND_ALLOW: "loopback",
  };
  const quiet = pino({ level: "silent" });
  const platform = await createPlatform(
    {
      config: loadConfig(env),
      db,
      databaseUrl: store.url,
      rateLimit: new MemoryRateLimitStore(),
      jobs: new JobQueue(store.url, quiet, true),
      operatorToken: "bench-operator-token-0123456789",
      log: quiet,
      env,
      secrets: (await loadSecretBox(env, path.join(root, "instances"))).box,
    },
    AREAS,
  );
  const app = await buildApp(platform);
  await app.ready();
  await startPlatform(platform, { schedule: false });

  const committed = new Map<string, number>();
  const early = new Map<string, number>();
  const seen = new Set<string>();
  const latencies: number[] = [];
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  const receiver = http.createServer((req, res) => {
    const id = String(req.headers["platform-event-id"]);
    req.resume();
    req.on("end", () => {
      const at = performance.now();
      res.writeHead(200).end("ok");
      const c = committed.get(id);
      if (c !== undefined) {
        committed.delete(id);
        latencies.push(at - c);
        if (latencies.length === EVENTS) done();
      } else if (!seen.has(id)) early.set(id, at); // delivered before this loop saw its COMMIT return
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as AddressInfo).port;

  const signup = await app.inject({
    method: "POST",
    url: "/v1/auth/signup",
    payload: { email: `bench-events-${process.pid}@example.com`, password: "bench password 123" },
  });
  const { token, account } = signup.json();
  const ep = await app.inject({
    method: "POST",
    url: "/v1/webhook-endpoints",
    headers: { authorization: `Bearer ${token}` },
    payload: { url: `http://127.0.0.1:${port}/hook`, event_types: ["*"] },
  });
  if (ep.statusCode !== 201) throw new Error(`endpoint: ${ep.body}`);

  log(`committing ${EVENTS} events at ${RATE}/s ...`);
  const owner = accountOwner(account.id);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      (async () => {
        let id = "";
        await inTransaction(db, async (tx) => {
          id = await recordEvent(tx, {
            type: "database.running",
            owner,
            resource: { kind: "database", id: `bench-${i}` },
            data: { i },
          });
        });
        const now = performance.now();
        const arrived = early.get(id);
        seen.add(id);
        if (arrived === undefined) committed.set(id, now);
        else {
          early.delete(id);
          latencies.push(Math.max(0, arrived - now));
          if (latencies.length === EVENTS) done();
        }
      })(),
    );
    if (inFlight.length >= 16) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  const timeout = setTimeout(() => done(), 120_000);
  await all;
  clearTimeout(timeout);
  const elapsed = performance.now() - started;
  // where the time went, by the store's clock: event commit → fan-out → the attempt's record
  const { rows: stages } = await db.query<{ fanout: number; attempt: number }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.created_at - e.created_at)) * 1000 AS fanout,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.at - d.created_at)) * 1000 AS attempt
       FROM events e JOIN webhook_deliveries d ON d.event_seq = e.seq JOIN webhook_attempts a ON a.delivery_id = d.id`,
  );
  log(
    `median stages: event → fan-out ${Math.round(stages[0].fanout)} ms, fan-out → attempt recorded ${Math.round(stages[0].attempt)} ms`,
  );
  rows.push([
    `webhooks: ${EVENTS} events at ${RATE}/s`,
    `${latencies.length}/${EVENTS}`,
    ms(pct(latencies, 50)),
    ms(pct(latencies, 99)),
    ms(Math.max(...latencies)),
    `${Math.round((latencies.length / elapsed) * 1000)}/s`,
  ]);
  receiver.close();
  await app.close();
  await stopPlatform(platform);
  await db.end();
  await store.stop();
  await rm(root, { recursive: true, force: true });
}

/**
 * Edge throughput with per-minute metrics on (EDGE_METRICS=on, the default) against off, in one run: two platforms
 * over one store, each edge routing a pod (a route source standing for the apps area, as test/edge does) to the same
 * local keep-alive upstream; rounds alternate off/on so the machine's drift falls on both. Target on/off ≥ 0.95.
 */
async function edgeThroughputWithMetrics(rows: string[][]): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "bench-edge-metrics-"));
  await chmod(root, 0o755);
  await ensureTraversable(root, postgresRunAs());
  const store = await startEmbeddedServer(path.join(root, "store"), "platform");
  const db = createPool(store.url, 20);
  await migrate(db, AREAS);
  const body = Buffer.from("hello from a pod\n");
  const upstream = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/plain", "content-length": body.length }).end(body),
  );
  upstream.keepAliveTimeout = 5000;
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const up = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const target = {
    kind: "pod",
    id: randomUUID(),
    owner: accountOwner(randomUUID()),
    upstreams: [up],
    visibility: "public" as const,
  };
  const quiet = pino({ level: "silent" });
  const edges: { metrics: string; port: number; stop: () => Promise<void> }[] = [];
  // one secret key for both platforms: the store's secrets are sealed with it
  const secrets = (await loadSecretBox({}, path.join(root, "instances-off"))).box;
  for (const metrics of ["off", "on"]) {
    const env = {
      LOG_LEVEL: "silent",
      DATA_DIR: path.join(root, `instances-${metrics}`),
      REGISTRY_PORT: "0",
      EDGE_PORT: "0",
      EDGE_TLS_PORT: "off",
      S3_PORT: "0",
      EDGE_METRICS: metrics,
    };
    const platform = await createPlatform(
      {
        config: loadConfig(env),
        db,
        databaseUrl: store.url,
        rateLimit: new MemoryRateLimitStore(),
        jobs: new JobQueue(store.url, quiet, false),
        operatorToken: "bench-operator-token-0123456789",
        log: quiet,
        env,
        secrets,
      },
      AREAS,
    );
    platform.kernel.contribute("edgeRoutes", {
      channel: "bench_edge_routes",
      resolve: async (_q: unknown, slug: string) => (slug === "hello" ? target : null),
    });
    await startPlatform(platform, { schedule: false });
    const edge = platform.state<{ port: number | null }>("edge");
    edges.push({ metrics, port: edge.port!, stop: () => stopPlatform(platform) });
  }
  const seconds = Number(process.env.BENCH_EDGE_SECONDS ?? 5);
  const rounds = 2;
  const rps: Record<string, number[]> = { off: [], on: [] };
  const p99: Record<string, number[]> = { off: [], on: [] };
  log(`edge: ${rounds} rounds of ${seconds} s per setting, metrics off then on ...`);
  for (let i = 0; i < rounds; i++)
    for (const e of edges) {
      const s = await measure(
        `http://127.0.0.1:${e.port}/`,
        { host: "hello.apps.localhost" },
        { connections: 32, duration: seconds, warmup: i === 0 ? 1 : 0 },
      );
      rps[e.metrics].push(s.rps);
      p99[e.metrics].push(s.p99);
    }
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  for (const m of ["off", "on"])
    rows.push([`edge, pod, metrics ${m}`, "-", "-", ms(Math.max(...p99[m])), "-", `${Math.round(mean(rps[m]))}/s`]);
  rows.push(["edge: metrics on / off", "-", "-", "-", "-", `${(mean(rps.on) / mean(rps.off)).toFixed(3)}×`]);
  for (const e of edges) await e.stop();
  upstream.close();
  await db.end();
  await store.stop();
  await rm(root, { recursive: true, force: true });
}

const rows: string[][] = [];
if (process.env.BENCH_EVENTS_PART !== "edge") await webhookLatency(rows);
if (process.env.BENCH_EVENTS_PART !== "webhooks") await edgeThroughputWithMetrics(rows);
printTable(["measure", "delivered", "p50", "p99", "max", "rate"], rows);
process.exit(0);
