import type { Principal } from "../auth/principal.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Db } from "../store/db.js";
import { notFound } from "../http/errors.js";
import { targetHours, targetMinutes, type MinuteRow } from "../edge/public.js";
import { podSamples, type PodSample } from "./repo.js";
import { databaseRows, rolledThrough } from "./series-repo.js";
import { counterIncrease, groupRows, podHours, type RuntimeRow } from "./runtime-repo.js";
import { databaseSeries, groupSeries, podSeries, siteSeries } from "./series.js";
import { splitOf, windowOf, type MetricsWindow, type WindowQuery } from "./window.js";

export { KEEP_MS, MAX_POINTS, type WindowQuery } from "./window.js";

/**
 * A pod's minute samples as runtime rows: restarts and network are the counters' increases over the previous
 * sample (runtime-repo.ts says how a counter that went down counts).
 */
function podMinuteRows(samples: PodSample[], from: number): RuntimeRow[] {
  const rows: RuntimeRow[] = [];
  let prev: PodSample | null = null;
  for (const s of samples) {
    const last = prev?.restartCount ?? null;
    const restarts = last !== null && s.restartCount > last ? s.restartCount - last : 0;
    const netRxBytes = counterIncrease(s.netInBytes, prev?.netInBytes);
    const netTxBytes = counterIncrease(s.netOutBytes, prev?.netOutBytes);
    prev = s;
    if (s.minute < from) continue; // the sample before the window: only its counters
    rows.push({
      at: s.minute,
      cpuPercent: s.cpuPercent,
      cpuMinutes: s.cpuPercent === null ? 0 : 1,
      memoryBytes: s.memoryBytes,
      memoryLimitBytes: s.memoryLimitBytes,
      restarts,
      replicas: 1,
      netRxBytes,
      netTxBytes,
    });
  }
  return rows;
}

export function metricsService(deps: { db: Db; kernel: Kernel; now?: () => number }) {
  const now = deps.now ?? Date.now;
  const db = deps.db;

  /** the window, and where its minute rows take over from hour rows */
  async function window(q: WindowQuery): Promise<MetricsWindow & { split: number }> {
    const w = windowOf(q, now());
    return { ...w, split: splitOf(w, w.hours ? await rolledThrough(db) : null) };
  }

  /** the edge's rows of an app over the window: hours before the split, minutes from it */
  async function traffic(target: { kind: string; id: string }, w: MetricsWindow & { split: number }) {
    const [hours, minutes] = await Promise.all([
      w.split > w.from ? targetHours(db, target, w.from, w.split) : ([] as MinuteRow[]),
      targetMinutes(db, target, w.split, w.to),
    ]);
    return [...hours, ...minutes];
  }

  async function find(principal: Principal, resource: "pods" | "static" | "databases", ref: string, kind?: string) {
    const found = await deps.kernel.findInstance(resource, principal.owner, ref);
    // the pods lookup finds groups too: each route names one kind
    if (!found || (kind && found.kind !== undefined && found.kind !== kind)) return null;
    return found;
  }

  return {
    /** Per-step series of one of the caller's pods (id or slug); 404 when not theirs. */
    async forPod(principal: Principal, ref: string, q: WindowQuery) {
      const found = await find(principal, "pods", ref, "pod");
      if (!found) throw notFound("pod");
      const w = await window(q);
      const [hours, samples, minutes] = await Promise.all([
        w.split > w.from ? podHours(db, found.id, w.from, w.split) : ([] as RuntimeRow[]),
        podSamples(db, found.id, w.split, w.to),
        traffic({ kind: "pod", id: found.id }, w),
      ]);
      return podSeries(found.id, w, [...hours, ...podMinuteRows(samples, w.split)], minutes);
    },

    /** A pod group's series: its members' runtime figures added, and the edge's traffic of the group's host. */
    async forGroup(principal: Principal, ref: string, q: WindowQuery) {
      const found = await find(principal, "pods", ref, "group");
      if (!found || found.kind !== "group") throw notFound("pod group");
      const w = await window(q);
      const [hours, minuteRows, minutes] = await Promise.all([
        w.split > w.from ? groupRows(db, found.id, w.from, w.split, "hours") : ([] as RuntimeRow[]),
        groupRows(db, found.id, w.split, w.to, "minutes"),
        traffic({ kind: "group", id: found.id }, w),
      ]);
      return groupSeries(found.id, w, [...hours, ...minuteRows], minutes);
    },

    /** A static site's traffic series (by slug or id). */
    async forSite(principal: Principal, ref: string, q: WindowQuery) {
      const found = await find(principal, "static", ref);
      if (!found) throw notFound("static site");
      const w = await window(q);
      return siteSeries(found.id, w, await traffic({ kind: "site", id: found.id }, w));
    },

    /** A managed database's series (by id or slug). */
    async forDatabase(principal: Principal, ref: string, q: WindowQuery) {
      const found = await find(principal, "databases", ref);
      if (!found) throw notFound("database");
      const w = await window(q);
      const [hours, minutes] = await Promise.all([
        w.split > w.from ? databaseRows(db, found.id, w.from, w.split, "hours") : [],
        databaseRows(db, found.id, w.split, w.to, "minutes"),
      ]);
      return databaseSeries(found.id, w, [...hours, ...minutes]);
    },
  };
}

export type MetricsService = ReturnType<typeof metricsService>;
