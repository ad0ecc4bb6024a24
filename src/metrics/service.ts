import type { Principal } from "../auth/principal.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Db } from "../store/db.js";
import { ApiError, notFound } from "../http/errors.js";
import { percentile, targetMinutes, type MinuteRow } from "../edge/public.js";
import { podSamples, type PodSample } from "./repo.js";

/** How long per-minute rows are kept (README "Retention"). */
export const KEEP_MS = 7 * 86_400_000;
/** The most points one answer holds (a day per minute). */
export const MAX_POINTS = 1440;

export interface MetricsPoint {
  /** start of the step (ISO 8601, UTC) */
  at: string;
  cpu_percent: number | null;
  memory_bytes: number | null;
  memory_limit_bytes: number | null;
  restarts: number;
  requests: number;
  errors_4xx: number;
  errors_5xx: number;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
}

export interface MetricsView {
  pod_id: string;
  from: string;
  to: string;
  step: number;
  points: MetricsPoint[];
}

export interface WindowQuery {
  from?: string;
  to?: string;
  step?: number;
}

/** The window asked for: to defaults to now, from to an hour before to; from is aligned down to the step. */
export function windowOf(q: WindowQuery, now: number): { from: number; to: number; stepMs: number } {
  const step = q.step ?? 60;
  const to = q.to ? Date.parse(q.to) : now;
  const rawFrom = q.from ? Date.parse(q.from) : to - 3_600_000;
  const bad = (why: string) => new ApiError("bad_metrics_window", why);
  if (Number.isNaN(to) || Number.isNaN(rawFrom)) throw bad("from and to are ISO 8601 times.");
  if (step < 60 || step % 60 !== 0) throw bad("step is a multiple of 60 seconds (60 is the finest).");
  const stepMs = step * 1000;
  const from = rawFrom - (rawFrom % stepMs);
  if (from >= to) throw bad("from must be before to.");
  if (from < now - KEEP_MS - stepMs) throw bad("Per-minute metrics are kept 7 days; from is older.");
  if ((to - from) / stepMs > MAX_POINTS)
    throw bad(`At most ${MAX_POINTS} points per answer: widen step or narrow the window.`);
  return { from, to, stepMs };
}

const avg = (xs: number[]): number | null =>
  xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100 : null;

/**
 * Buckets the minutes into steps: requests and errors add, latency percentiles come from the merged histograms,
 * CPU is the average of the step's minutes, memory the highest (a step's peak is what an OOM cares about),
 * restarts the increase of the pod's restart count over the previous sample. Every step is present; quiet ones
 * are zeros (traffic) and null (runtime figures not sampled).
 */
export function series(
  podId: string,
  samples: PodSample[],
  minutes: MinuteRow[],
  w: { from: number; to: number; stepMs: number },
): MetricsView {
  const n = Math.ceil((w.to - w.from) / w.stepMs);
  const idx = (ms: number) => Math.floor((ms - w.from) / w.stepMs);
  const points = Array.from({ length: n }, (_, i) => ({
    at: w.from + i * w.stepMs,
    cpu: [] as number[],
    mem: null as number | null,
    limit: null as number | null,
    restarts: 0,
    requests: 0,
    s4: 0,
    s5: 0,
    hist: [] as number[],
  }));
  let lastCount: number | null = null;
  for (const s of samples) {
    const i = idx(s.minute);
    if (i >= 0 && i < n) {
      const p = points[i];
      if (s.cpuPercent !== null) p.cpu.push(s.cpuPercent);
      if (s.memoryBytes !== null) p.mem = Math.max(p.mem ?? 0, s.memoryBytes);
      if (s.memoryLimitBytes !== null) p.limit = s.memoryLimitBytes;
      if (lastCount !== null && s.restartCount > lastCount) p.restarts += s.restartCount - lastCount;
    }
    lastCount = s.restartCount;
  }
  for (const m of minutes) {
    const i = idx(m.minute);
    if (i < 0 || i >= n) continue;
    const p = points[i];
    p.requests += m.requests;
    p.s4 += m.status4xx;
    p.s5 += m.status5xx;
    for (let b = 0; b < m.latency.length; b++) p.hist[b] = (p.hist[b] ?? 0) + m.latency[b];
  }
  return {
    pod_id: podId,
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    step: w.stepMs / 1000,
    points: points.map((p) => ({
      at: new Date(p.at).toISOString(),
      cpu_percent: avg(p.cpu),
      memory_bytes: p.mem,
      memory_limit_bytes: p.limit,
      restarts: p.restarts,
      requests: p.requests,
      errors_4xx: p.s4,
      errors_5xx: p.s5,
      p50_ms: percentile(p.hist, 0.5),
      p95_ms: percentile(p.hist, 0.95),
      p99_ms: percentile(p.hist, 0.99),
    })),
  };
}

export interface MetricsService {
  /** Per-step series of one of the caller's pods (id or slug); 404 when not theirs. */
  forPod(principal: Principal, ref: string, q: WindowQuery): Promise<MetricsView>;
}

export function metricsService(deps: { db: Db; kernel: Kernel; now?: () => number }): MetricsService {
  const now = deps.now ?? Date.now;
  return {
    async forPod(principal, ref, q) {
      const found = await deps.kernel.findInstance("pods", principal.owner, ref);
      // the pods lookup finds groups too: this route names pods only
      if (!found || (found.kind !== undefined && found.kind !== "pod")) throw notFound("pod");
      const w = windowOf(q, now());
      const [samples, minutes] = await Promise.all([
        podSamples(deps.db, found.id, w.from, w.to),
        targetMinutes(deps.db, { kind: "pod", id: found.id }, w.from, w.to),
      ]);
      return series(found.id, samples, minutes, w);
    },
  };
}
