import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { ownerMinutes, percentile, targetMinutes, type MinuteRow } from "../edge/public.js";
import { databaseMinutes, samplesOf, type DatabaseSeriesRow, type PodSample } from "../metrics/public.js";
import { groupPodIds } from "../apps/public.js";

/** What a rule can watch: one of the owner's pods, groups, sites or databases, or (null) all of them. */
export type ResourceKind = "pod" | "pod_group" | "site" | "database";
export const RESOURCE_KINDS: ResourceKind[] = ["pod", "pod_group", "site", "database"];

/**
 * The metrics, named as the metrics API's fields so a threshold reads in the unit a chart shows:
 * runtime ones from pod_samples, traffic ones from the edge's per-minute rows, database ones from
 * database_samples (the fields of GET /v1/databases/{id}/metrics). Sites have no runtime series; databases have
 * only theirs.
 */
export const METRICS = {
  cpu_percent: { source: "runtime", unit: "percent of one CPU, the busiest pod's average over the window" },
  memory_bytes: { source: "runtime", unit: "bytes, the highest sample in the window" },
  restarts: { source: "runtime", unit: "restarts during the window" },
  requests: { source: "edge", unit: "requests during the window" },
  errors_4xx: { source: "edge", unit: "4xx answers during the window" },
  errors_5xx: { source: "edge", unit: "5xx answers during the window" },
  error_rate_percent: { source: "edge", unit: "5xx answers as a percent of requests (no requests: no value)" },
  p95_ms: { source: "edge", unit: "95th percentile response time in ms (no requests: no value)" },
  connections: { source: "database", unit: "client sessions, the highest sample in the window" },
  commits_per_second: { source: "database", unit: "commits per second over the window" },
  size_bytes: { source: "database", unit: "bytes on disk, the highest sample in the window" },
  cache_hit_ratio: { source: "database", unit: "block hits / (hits + reads) over the window, 0 to 1" },
  replication_lag_bytes: { source: "database", unit: "bytes the HA standby's replay is behind, the highest" },
  replication_lag_seconds: { source: "database", unit: "seconds the HA standby's replay is behind, the highest" },
  base_backup_age_seconds: { source: "database", unit: "age of the newest full backup, the highest" },
  archived_wal_age_seconds: { source: "database", unit: "age of the last archived WAL segment, the highest" },
} as const;

export type Metric = keyof typeof METRICS;
export const METRIC_NAMES = Object.keys(METRICS) as Metric[];
export const isMetric = (m: string): m is Metric => Object.hasOwn(METRICS, m);

/**
 * Whether a metric has a series for a resource kind (null: the whole owner, which has the runtime and edge ones).
 * Database metrics name one database: an owner-wide "connections > 80" would mix servers of different sizes.
 */
export function metricFits(metric: Metric, kind: ResourceKind | null): boolean {
  const source = METRICS[metric].source;
  if (kind === "database" || source === "database") return kind === "database" && source === "database";
  return source === "edge" || kind !== "site";
}

export const MINUTE_MS = 60_000;

/**
 * The window of a rule evaluated at `now`: the last `minutes` minutes counting the one now running, so a 5-minute
 * window holds 4 whole minutes and the running one (the edge flushes its rows every few seconds).
 */
export function windowAt(now: number, minutes: number): { from: number; to: number } {
  const current = now - (now % MINUTE_MS);
  return { from: current - (minutes - 1) * MINUTE_MS, to: current + MINUTE_MS };
}

/**
 * The figure a rule compares, or null when there is none to compare (no samples, no requests for a rate or a
 * percentile): a rule never fires on missing data, as Prometheus' absent series never match. Counts are 0 when
 * quiet, so `requests < 1` does fire on silence.
 */
export function figureOf(metric: Metric, samples: PodSample[], minutes: MinuteRow[], from: number): number | null {
  switch (metric) {
    case "cpu_percent": {
      const perPod = new Map<string, number[]>();
      for (const s of samples)
        if (s.minute >= from && s.cpuPercent !== null)
          perPod.set(s.podId, [...(perPod.get(s.podId) ?? []), s.cpuPercent]);
      const avgs = [...perPod.values()].map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length);
      return avgs.length ? Math.round(Math.max(...avgs) * 100) / 100 : null;
    }
    case "memory_bytes": {
      const mem = samples.filter((s) => s.minute >= from && s.memoryBytes !== null).map((s) => s.memoryBytes!);
      return mem.length ? Math.max(...mem) : null;
    }
    case "restarts": {
      // increases of each pod's restart count between consecutive samples, the later one inside the window
      let restarts = 0;
      for (let i = 1; i < samples.length; i++) {
        const [a, b] = [samples[i - 1], samples[i]];
        if (a.podId === b.podId && b.minute >= from && b.restartCount > a.restartCount)
          restarts += b.restartCount - a.restartCount;
      }
      return restarts;
    }
    case "requests":
      return minutes.reduce((s, m) => s + m.requests, 0);
    case "errors_4xx":
      return minutes.reduce((s, m) => s + m.status4xx, 0);
    case "errors_5xx":
      return minutes.reduce((s, m) => s + m.status5xx, 0);
    case "error_rate_percent": {
      const requests = minutes.reduce((s, m) => s + m.requests, 0);
      const errors = minutes.reduce((s, m) => s + m.status5xx, 0);
      return requests ? Math.round((errors / requests) * 10_000) / 100 : null;
    }
    case "p95_ms": {
      const hist: number[] = [];
      for (const m of minutes) for (let b = 0; b < m.latency.length; b++) hist[b] = (hist[b] ?? 0) + m.latency[b];
      return percentile(hist, 0.95);
    }
    default:
      return databaseFigure(metric, []);
  }
}

/** the database gauges: the highest sample of the window is their figure */
const GAUGES: Partial<Record<Metric, (r: DatabaseSeriesRow) => number | null>> = {
  connections: (r) => r.connections,
  size_bytes: (r) => r.sizeBytes,
  replication_lag_bytes: (r) => r.replicationLagBytes,
  replication_lag_seconds: (r) => r.replicationLagSeconds,
  base_backup_age_seconds: (r) => r.baseBackupAgeSeconds,
  archived_wal_age_seconds: (r) => r.archivedWalAgeSeconds,
};

const highest = (rows: DatabaseSeriesRow[], pick: (r: DatabaseSeriesRow) => number | null): number | null => {
  const xs = rows.map(pick).filter((x): x is number => x !== null);
  return xs.length ? Math.max(...xs) : null;
};

/**
 * A database metric over the window's minute rows, as the database metrics route computes a step: gauges are the
 * highest sample, commits per second the commits over the seconds the samples cover, the cache hit ratio the
 * window's hits over hits plus reads. No samples (a stopped server): no value.
 */
export function databaseFigure(metric: Metric, rows: DatabaseSeriesRow[]): number | null {
  const gauge = GAUGES[metric];
  if (gauge) return highest(rows, gauge);
  switch (metric) {
    case "commits_per_second": {
      const counted = rows.filter((r) => r.commits !== null && r.coveredSeconds);
      const seconds = counted.reduce((a, r) => a + r.coveredSeconds!, 0);
      return seconds ? Math.round((counted.reduce((a, r) => a + r.commits!, 0) / seconds) * 1000) / 1000 : null;
    }
    case "cache_hit_ratio": {
      const hits = rows.reduce((a, r) => a + (r.blocksHit ?? 0), 0);
      const reads = rows.reduce((a, r) => a + (r.blocksRead ?? 0), 0);
      return hits + reads ? Math.round((hits / (hits + reads)) * 10_000) / 10_000 : null;
    }
    default:
      return null;
  }
}

/** How far back runtime samples are read before the window: the previous sample a restart count increases from. */
const RESTART_LOOKBACK_MS = 5 * MINUTE_MS;

const EDGE_KIND: Record<Exclude<ResourceKind, "database">, string> = { pod: "pod", pod_group: "group", site: "site" };

/** Reads the series a rule's metric needs and returns its figure over the window ending at `now`. */
export async function readFigure(
  q: Queryable,
  rule: {
    owner: Owner;
    resourceKind: ResourceKind | null;
    resourceId: string | null;
    metric: Metric;
    windowMinutes: number;
  },
  now: number,
): Promise<number | null> {
  const { from, to } = windowAt(now, rule.windowMinutes);
  if (rule.resourceKind === "database")
    return databaseFigure(rule.metric, await databaseMinutes(q, rule.resourceId!, from, to));
  if (METRICS[rule.metric].source === "edge") {
    const minutes =
      rule.resourceKind === null
        ? await ownerMinutes(q, rule.owner, from, to)
        : await targetMinutes(q, { kind: EDGE_KIND[rule.resourceKind], id: rule.resourceId! }, from, to);
    return figureOf(rule.metric, [], minutes, from);
  }
  const since = from - RESTART_LOOKBACK_MS;
  let samples: PodSample[];
  if (rule.resourceKind === null) samples = await samplesOf(q, { owner: rule.owner }, since, to);
  else if (rule.resourceKind === "pod") samples = await samplesOf(q, { podIds: [rule.resourceId!] }, since, to);
  else samples = await samplesOf(q, { podIds: await groupPodIds(q, rule.resourceId!) }, since, to);
  return figureOf(rule.metric, samples, [], from);
}

/** Whether `value` meets the rule's condition; a missing value never does. */
export function holds(value: number | null, comparison: Comparison, threshold: number): boolean {
  if (value === null) return false;
  switch (comparison) {
    case ">":
      return value > threshold;
    case ">=":
      return value >= threshold;
    case "<":
      return value < threshold;
    case "<=":
      return value <= threshold;
  }
}

export type Comparison = ">" | ">=" | "<" | "<=";
export const COMPARISONS: Comparison[] = [">", ">=", "<", "<="];
