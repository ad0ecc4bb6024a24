import { percentile, type MinuteRow } from "../edge/public.js";
import type { MetricsWindow } from "./window.js";
import type { DatabaseSeriesRow } from "./series-repo.js";
import type { RuntimeRow } from "./runtime-repo.js";

/**
 * Buckets minute and hour rows into the window's steps. Every step is present: additive figures of quiet steps are
 * 0, figures not sampled are null (a stopped pod or database shows gaps, not zeros). Per step: counters add;
 * latency percentiles come from the merged fixed-bucket histograms; CPU is the average of the step's minutes;
 * memory, connections, size, lag and backup ages are the step's highest (a peak is what an OOM or an alert cares
 * about); commits per second are the step's commits over the seconds they cover; the cache hit ratio is the
 * step's block hits over hits and reads; network bytes add (null when no minute of the step knows them).
 */

const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits;
const maxOf = (a: number | null, b: number | null): number | null => (b === null ? a : a === null ? b : Math.max(a, b));

function steps<T>(w: MetricsWindow, make: () => T): { at: number; acc: T }[] {
  const count = Math.ceil((w.to - w.from) / w.stepMs);
  return Array.from({ length: count }, (_, i) => ({ at: w.from + i * w.stepMs, acc: make() }));
}

function place<T>(w: MetricsWindow, points: { acc: T }[], at: number): T | null {
  const i = Math.floor((at - w.from) / w.stepMs);
  return i >= 0 && i < points.length ? points[i].acc : null;
}

const iso = (ms: number) => new Date(ms).toISOString();

export interface TrafficPoint {
  requests: number;
  errors_4xx: number;
  errors_5xx: number;
  bytes_out: number;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
}

export interface RuntimePoint {
  cpu_percent: number | null;
  memory_bytes: number | null;
  memory_limit_bytes: number | null;
  restarts: number;
  net_rx_bytes: number | null;
  net_tx_bytes: number | null;
}

function traffic(w: MetricsWindow, rows: MinuteRow[]): TrafficPoint[] {
  const points = steps(w, () => ({ requests: 0, s4: 0, s5: 0, bytes: 0, hist: [] as number[] }));
  for (const r of rows) {
    const p = place(w, points, r.minute);
    if (!p) continue;
    p.requests += r.requests;
    p.s4 += r.status4xx;
    p.s5 += r.status5xx;
    p.bytes += r.bytesOut;
    for (let b = 0; b < r.latency.length; b++) p.hist[b] = (p.hist[b] ?? 0) + r.latency[b];
  }
  return points.map(({ acc: p }) => ({
    requests: p.requests,
    errors_4xx: p.s4,
    errors_5xx: p.s5,
    bytes_out: p.bytes,
    p50_ms: percentile(p.hist, 0.5),
    p95_ms: percentile(p.hist, 0.95),
    p99_ms: percentile(p.hist, 0.99),
  }));
}

function runtime(w: MetricsWindow, rows: RuntimeRow[]): (RuntimePoint & { replicas: number })[] {
  const points = steps(w, () => ({
    cpu: 0,
    weight: 0,
    mem: null as number | null,
    limit: null as number | null,
    restarts: 0,
    replicas: 0,
    rx: null as number | null,
    tx: null as number | null,
  }));
  const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
  for (const r of rows) {
    const p = place(w, points, r.at);
    if (!p) continue;
    if (r.cpuPercent !== null && r.cpuMinutes > 0) {
      p.cpu += r.cpuPercent * r.cpuMinutes;
      p.weight += r.cpuMinutes;
    }
    p.mem = maxOf(p.mem, r.memoryBytes);
    if (r.memoryLimitBytes !== null) p.limit = r.memoryLimitBytes;
    p.restarts += r.restarts;
    p.replicas = Math.max(p.replicas, r.replicas);
    p.rx = add(p.rx, r.netRxBytes);
    p.tx = add(p.tx, r.netTxBytes);
  }
  return points.map(({ acc: p }) => ({
    cpu_percent: p.weight ? round(p.cpu / p.weight) : null,
    memory_bytes: p.mem,
    memory_limit_bytes: p.limit,
    restarts: p.restarts,
    replicas: p.replicas,
    net_rx_bytes: p.rx,
    net_tx_bytes: p.tx,
  }));
}

const frame = (w: MetricsWindow) => ({ from: iso(w.from), to: iso(w.to), step: w.stepMs / 1000 });

/** A pod's or a group's points: runtime and traffic per step, less the runtime figure `hidden` that it does not show. */
function appPoints<K extends "replicas" | "memory_limit_bytes">(
  w: MetricsWindow,
  rows: RuntimeRow[],
  minutes: MinuteRow[],
  hidden: K,
) {
  const tr = traffic(w, minutes);
  return runtime(w, rows).map((point, i) => {
    const { [hidden]: _hidden, ...r } = point;
    return { at: iso(w.from + i * w.stepMs), ...r, ...tr[i] };
  });
}

export function podSeries(podId: string, w: MetricsWindow, rows: RuntimeRow[], minutes: MinuteRow[]) {
  return { pod_id: podId, ...frame(w), points: appPoints(w, rows, minutes, "replicas") };
}

export function groupSeries(groupId: string, w: MetricsWindow, rows: RuntimeRow[], minutes: MinuteRow[]) {
  return { group_id: groupId, ...frame(w), points: appPoints(w, rows, minutes, "memory_limit_bytes") };
}

export function siteSeries(siteId: string, w: MetricsWindow, minutes: MinuteRow[]) {
  return {
    site_id: siteId,
    ...frame(w),
    points: traffic(w, minutes).map(({ p99_ms: _p99, ...t }, i) => ({ at: iso(w.from + i * w.stepMs), ...t })),
  };
}

export function databaseSeries(databaseId: string, w: MetricsWindow, rows: DatabaseSeriesRow[]) {
  const points = steps(w, () => ({
    sampled: false,
    conn: 0,
    maxConn: 0,
    commits: 0,
    covered: 0,
    hits: 0,
    reads: 0,
    size: 0,
    lagBytes: null as number | null,
    lagSeconds: null as number | null,
    baseAge: null as number | null,
    walAge: null as number | null,
  }));
  for (const r of rows) {
    const p = place(w, points, r.at);
    if (!p) continue;
    p.sampled = true;
    p.conn = Math.max(p.conn, r.connections);
    p.maxConn = Math.max(p.maxConn, r.maxConnections);
    if (r.commits !== null && r.coveredSeconds) {
      p.commits += r.commits;
      p.covered += r.coveredSeconds;
    }
    p.hits += r.blocksHit ?? 0;
    p.reads += r.blocksRead ?? 0;
    p.size = Math.max(p.size, r.sizeBytes);
    p.lagBytes = maxOf(p.lagBytes, r.replicationLagBytes);
    p.lagSeconds = maxOf(p.lagSeconds, r.replicationLagSeconds);
    p.baseAge = maxOf(p.baseAge, r.baseBackupAgeSeconds);
    p.walAge = maxOf(p.walAge, r.archivedWalAgeSeconds);
  }
  return {
    database_id: databaseId,
    ...frame(w),
    points: points.map(({ at, acc: p }) => ({
      at: iso(at),
      connections: p.sampled ? p.conn : null,
      max_connections: p.sampled ? p.maxConn : null,
      commits_per_second: p.covered ? round(p.commits / p.covered, 3) : null,
      size_bytes: p.sampled ? p.size : null,
      cache_hit_ratio: p.hits + p.reads ? round(p.hits / (p.hits + p.reads), 4) : null,
      replication_lag_bytes: p.lagBytes,
      replication_lag_seconds: p.lagSeconds,
      base_backup_age_seconds: p.baseAge === null ? null : Math.round(p.baseAge),
      archived_wal_age_seconds: p.walAge === null ? null : Math.round(p.walAge),
    })),
  };
}
