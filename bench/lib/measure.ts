/** One autocannon measurement: warm-up, then a timed run; only 2xx responses count. */
import autocannon from "autocannon";
import type { CpuProbe } from "./cpu.js";

export interface LoadOptions {
  connections: number;
  /** seconds of the measured run */
  duration: number;
  /** seconds of load before it, discarded (JIT, caches, pool connections) */
  warmup: number;
}

/** A numeric setting of a benchmark from the environment; a bad value ends the run with a message. */
export function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) {
    process.stderr.write(`${name} must be a number >= ${min}, got "${raw}"\n`);
    process.exit(2);
  }
  return n;
}

/** BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_CONNECTIONS (64): the load every HTTP benchmark applies. */
export function loadFromEnv(): LoadOptions {
  return {
    duration: envNumber("BENCH_DURATION", 10, 1),
    warmup: envNumber("BENCH_WARMUP", 2, 0),
    connections: Math.round(envNumber("BENCH_CONNECTIONS", 64, 1)),
  };
}

export interface Sample {
  /** 2xx responses per second of the measured run */
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** e.g. "200:51234" or "200:100 429:5" */
  statusCodes: string;
  /** per probed process group: percent of one core used during the measured run */
  cpu: Record<string, number>;
}

function run(
  url: string,
  headers: Record<string, string>,
  connections: number,
  duration: number,
): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections,
    duration,
    pipelining: 1,
    headers,
    timeout: 10,
    // latencies of 2xx answers only (autocannon's default, spelled out): an error answer is no benchmark
    excludeErrorStats: true,
  });
}

export async function measure(
  url: string,
  headers: Record<string, string>,
  opts: LoadOptions,
  probe?: CpuProbe,
): Promise<Sample> {
  if (opts.warmup > 0) await run(url, headers, opts.connections, opts.warmup);
  const before = probe?.read() ?? {};
  const t0 = process.hrtime.bigint();
  const r = await run(url, headers, opts.connections, opts.duration);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const after = probe?.read() ?? {};
  const cpu: Record<string, number> = {};
  for (const [name, end] of Object.entries(after)) {
    const start = before[name];
    if (end !== null && start !== null && start !== undefined) cpu[name] = ((end - start) / wall) * 100;
  }
  const codes = Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}:${s.count ?? 0}`)
    .join(" ");
  return {
    rps: r["2xx"] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok: r["2xx"],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: codes,
    cpu,
  };
}
