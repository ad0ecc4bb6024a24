import { inTransaction, type Db } from "../store/db.js";
import { pruneHourStats, pruneMinuteStats, rollupEdgeHours } from "../edge/public.js";
import { pruneSamples } from "./repo.js";
import { lockRollup, pruneSeries, rolledThrough, rollupRuntimeHours, setRolledThrough } from "./series-repo.js";
import { HOUR_MS, KEEP_HOURS_MS, KEEP_MS } from "./window.js";

/** an hour is rolled up this long after it ends: the edge's last flush and the minute's samples arrive by then */
export const SETTLE_MS = 2 * 60_000;

const floorHour = (ms: number) => ms - (ms % HOUR_MS);

/**
 * Rolls every finished hour not rolled up yet (at most the 7 days of minutes kept) into hour rows, and moves the
 * watermark past them, in one transaction under a lock (two processes never roll the same hours; a kill leaves
 * the watermark where it was, and the rerun replaces any rows). Minutes arriving after their hour was rolled up
 * (more than SETTLE_MS late) stay in the minute rows only.
 */
export async function rollupHours(db: Db, now = Date.now()): Promise<{ from: number; to: number; rows: number }> {
  return inTransaction(db, async (tx) => {
    await lockRollup(tx);
    const through = await rolledThrough(tx);
    const to = floorHour(now - SETTLE_MS);
    const from = Math.max(through ?? 0, floorHour(now - KEEP_MS));
    if (from >= to) return { from, to, rows: 0 };
    const rows = (await rollupRuntimeHours(tx, from, to)) + (await rollupEdgeHours(tx, from, to));
    await setRolledThrough(tx, to);
    return { from, to, rows };
  });
}

/**
 * Retention: minute rows older than 7 days (never ones not rolled up yet), hour rows older than 90 days. Storage
 * stays bounded per resource by 10,080 minute rows and 2,160 hour rows (README "Retention and storage").
 */
export async function pruneMetrics(db: Db, now = Date.now()): Promise<{ minutes: number; hours: number }> {
  const through = await rolledThrough(db);
  const minutesBefore = Math.min(now - KEEP_MS, through ?? now - KEEP_MS);
  const hoursBefore = now - KEEP_HOURS_MS;
  const [samples, edgeMinutes, edgeHours, series] = await Promise.all([
    pruneSamples(db, minutesBefore),
    pruneMinuteStats(db, minutesBefore),
    pruneHourStats(db, hoursBefore),
    pruneSeries(db, minutesBefore, hoursBefore),
  ]);
  return { minutes: samples + edgeMinutes + series.minutes, hours: edgeHours + series.hours };
}
