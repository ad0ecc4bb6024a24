import type { Principal } from "../../auth/principal.js";
import type { Resource } from "../../auth/scopes.js";
import type { JobSpec } from "../../kernel/area.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { Db } from "../../store/db.js";
import { notFound } from "../../http/errors.js";
import { addInto, emptyHistogram, percentile } from "./histogram.js";
import type { Queryable } from "../../store/db.js";
import type { Owner } from "../../kernel/owner.js";
import { ownerDaily, pruneStats, targetDaily, type StatsRow } from "./repo.js";

/** The windows the API offers (spec: ?days=7, 30 or 90). */
export const WINDOWS = [7, 30, 90] as const;
export type Window = (typeof WINDOWS)[number];

/** What the edge records stats for (EdgeTarget.kind), and the resource whose lookup finds it. */
export type StatsKind = "pod" | "group" | "site";
const RESOURCE: Record<StatsKind, { resource: Resource; what: string }> = {
  pod: { resource: "pods", what: "pod" },
  group: { resource: "pods", what: "pod group" },
  site: { resource: "static", what: "static site" },
};

export interface StatsFigures {
  requests: number;
  errors_4xx: number;
  errors_5xx: number;
  /** null without requests: no response time to speak of */
  p50_ms: number | null;
  p95_ms: number | null;
  bytes_out: number;
}

export interface StatsView {
  days: number;
  /** first and last day of the window (YYYY-MM-DD, UTC; `to` is today) */
  from: string;
  to: string;
  /** every day of the window, oldest first; quiet days are zeros */
  daily: (StatsFigures & { date: string })[];
  totals: StatsFigures;
}

const DAY_MS = 86_400_000;
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The window of `days` days ending today (UTC). */
export function windowOf(days: number, now = Date.now()): { from: string; to: string; dates: string[] } {
  const dates = Array.from({ length: days }, (_, i) => utcDay(now - (days - 1 - i) * DAY_MS));
  return { from: dates[0], to: dates[days - 1], dates };
}

function figures(rows: StatsRow[]): StatsFigures {
  const hist = emptyHistogram();
  const f = { requests: 0, errors_4xx: 0, errors_5xx: 0, bytes_out: 0 };
  for (const r of rows) {
    f.requests += r.requests;
    f.errors_4xx += r.status4xx;
    f.errors_5xx += r.status5xx;
    f.bytes_out += r.bytesOut;
    addInto(hist, r.latency);
  }
  return { ...f, p50_ms: percentile(hist, 0.5), p95_ms: percentile(hist, 0.95) };
}

/**
 * The answer for a window: every day present (several rows of one day, e.g. several apps of an organization,
 * are summed, response times from their merged buckets), and the window's totals.
 */
export function summarize(rows: StatsRow[], days: number, now = Date.now()): StatsView {
  const { from, to, dates } = windowOf(days, now);
  const byDay = new Map<string, StatsRow[]>();
  for (const r of rows) byDay.set(r.day, [...(byDay.get(r.day) ?? []), r]);
  return {
    days,
    from,
    to,
    daily: dates.map((date) => ({ date, ...figures(byDay.get(date) ?? []) })),
    totals: figures(rows.filter((r) => r.day >= from && r.day <= to)),
  };
}

/**
 * Organizations' views (spec `GET /v1/org/stats/sites`, `/{slug}`; src/orgs/stats): the window's statistics of the
 * given apps of one owner, each app's and their sum (days summed, response times from merged buckets), from one
 * range of the owner index. Days whose rows another owner flushed (before an app became the owner's) are not counted.
 */
export async function ownerAppsStats(
  q: Queryable,
  owner: Owner,
  apps: { kind: StatsKind; id: string }[],
  days: Window,
  now = Date.now(),
): Promise<{ apps: StatsView[]; total: StatsView }> {
  const { from, to } = windowOf(days, now);
  const index = new Map(apps.map((a, i) => [`${a.kind}:${a.id}`, i]));
  const per: StatsRow[][] = apps.map(() => []);
  const all: StatsRow[] = [];
  const rows = apps.length ? await ownerDaily(q, owner, from, to, [...new Set(apps.map((a) => a.kind))]) : [];
  for (const r of rows) {
    const i = index.get(`${r.kind}:${r.id}`);
    if (i === undefined) continue;
    per[i].push(r);
    all.push(r);
  }
  return { apps: per.map((r) => summarize(r, days, now)), total: summarize(all, days, now) };
}

export interface StatsService {
  /** Daily statistics of one of the caller's apps (id or slug, as its own routes take it); 404 when not theirs. */
  forApp(principal: Principal, kind: StatsKind, ref: string, days: Window): Promise<StatsView>;
}

export function statsService(deps: { db: Db; kernel: Kernel; now?: () => number }): StatsService {
  const now = deps.now ?? Date.now;
  return {
    async forApp(principal, kind, ref, days) {
      const { resource, what } = RESOURCE[kind];
      const found = await deps.kernel.findInstance(resource, principal.owner, ref);
      // the pods lookup finds groups too: a pod route given a group (or the reverse) names nothing
      if (!found || (found.kind !== undefined && found.kind !== kind)) throw notFound(what);
      const at = now();
      const { from, to } = windowOf(days, at);
      return summarize(await targetDaily(deps.db, { kind, id: found.id }, from, to), days, at);
    },
  };
}

/** Daily at 03:23 UTC: days older than EDGE_STATS_KEEP_DAYS go. */
export function statsJobs(db: Db, keepDays: number): JobSpec[] {
  return [
    {
      name: "edge.prune-stats",
      cron: "23 3 * * *",
      handler: async () => {
        await pruneStats(db, utcDay(Date.now() - keepDays * DAY_MS));
      },
    },
  ];
}
