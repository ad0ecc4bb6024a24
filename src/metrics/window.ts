import { ApiError } from "../http/errors.js";

/** How long per-minute rows are kept (README "Retention and storage"). */
export const KEEP_MS = 7 * 86_400_000;
/** How long hour rows are kept. */
export const KEEP_HOURS_MS = 90 * 86_400_000;
/** The most points one answer holds (a day per minute, 60 days per hour). */
export const MAX_POINTS = 1440;
export const HOUR_MS = 3_600_000;

export interface WindowQuery {
  from?: string;
  to?: string;
  step?: number;
}

export interface MetricsWindow {
  from: number;
  to: number;
  stepMs: number;
  /** whole-hour steps read the hour roll-ups (and the minutes not rolled up yet); finer steps read minutes */
  hours: boolean;
}

/**
 * The window asked for: `to` defaults to now, `from` to an hour before `to`; `from` is aligned down to the step
 * (epoch-aligned, as Prometheus' query_range and Grafana do). A step of whole hours reads hour rows and may reach 90
 * days back; a finer one reads minutes, kept 7 days.
 */
export function windowOf(q: WindowQuery, now: number): MetricsWindow {
  const step = q.step ?? 60;
  const bad = (why: string) => new ApiError("bad_metrics_window", why);
  const to = q.to ? Date.parse(q.to) : now;
  const rawFrom = q.from ? Date.parse(q.from) : to - HOUR_MS;
  if (Number.isNaN(to) || Number.isNaN(rawFrom)) throw bad("from and to are ISO 8601 times.");
  if (!Number.isInteger(step) || step < 60 || step % 60 !== 0)
    throw bad("step is a whole number of minutes in seconds: 60, 120, … (60 is the finest).");
  const stepMs = step * 1000;
  const hours = stepMs % HOUR_MS === 0;
  const from = rawFrom - (rawFrom % stepMs);
  if (from >= to) throw bad("from must be before to.");
  if (!hours && from < now - KEEP_MS - stepMs)
    throw bad("Per-minute rows are kept 7 days: for an older from, use a step of whole hours (3600, 7200, …).");
  if (from < now - KEEP_HOURS_MS - stepMs) throw bad("Hourly rows are kept 90 days; from is older.");
  if ((to - from) / stepMs > MAX_POINTS)
    throw bad(`At most ${MAX_POINTS} points per answer: widen step or narrow the window.`);
  return { from, to, stepMs, hours };
}

/**
 * Where minute rows take over from hour rows in a window: hour rows cover [from, split), minute rows [split, to).
 * Minute-resolution windows read minutes only (split = from); hour windows read hours up to the roll-up's
 * watermark (null: it never ran, so minutes only).
 */
export function splitOf(w: MetricsWindow, rolledThrough: number | null): number {
  if (!w.hours || rolledThrough === null) return w.from;
  return Math.min(Math.max(rolledThrough, w.from), w.to);
}
