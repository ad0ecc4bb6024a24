import { rm } from "node:fs/promises";
import type { WalContinuity } from "../types.js";
import { checkContinuity, dropSegmentsBefore, readySegments } from "./archive.js";
import { listStoredBackups, removePartials } from "./backup.js";
import type { InstanceContext } from "./context.js";
import { parseLsn, segmentOf } from "./wal.js";

/** What an instance's backups allow recovering to: WAL continuity from each backup to now, and pruning to the retention window. */

export async function continuity(ctx: InstanceContext, running: boolean): Promise<WalContinuity> {
  const backups = await listStoredBackups(ctx.layout.baseBackups);
  const seg = ctx.record.walSegmentBytes;
  let live = null;
  if (running) {
    const row = await ctx
      .withPrimary((c) =>
        c.query<{
          lsn: string;
          file: string;
          failed_wal: string | null;
          failed_at: Date | null;
          archived_at: Date | null;
        }>(
          `SELECT pg_current_wal_lsn()::text AS lsn, pg_walfile_name(pg_current_wal_lsn()) AS file,
              last_failed_wal AS failed_wal, last_failed_time AS failed_at, last_archived_time AS archived_at
         FROM pg_stat_archiver`,
        ),
      )
      .then((r) => r.rows[0]);
    const failing = row.failed_at && (!row.archived_at || row.failed_at > row.archived_at);
    live = {
      timeline: parseInt(row.file.slice(0, 8), 16),
      currentSegNo: segmentOf(parseLsn(row.lsn), seg),
      ready: await readySegments(ctx.primary.dataDir),
      archiverFailure: failing ? { wal: row.failed_wal ?? "", at: row.failed_at!.toISOString() } : null,
    };
  }
  return checkContinuity(ctx.layout.walArchive, seg, backups, live);
}

export async function pruneBackups(
  ctx: InstanceContext,
  retentionDays: number,
  now: Date,
): Promise<{ removedBackups: string[]; removedWal: number }> {
  await removePartials(ctx.layout.baseBackups);
  const backups = await listStoredBackups(ctx.layout.baseBackups);
  const cutoff = now.getTime() - retentionDays * 86_400_000;
  const inWindow = backups.filter((b) => new Date(b.finishedAt).getTime() >= cutoff);
  // the newest backup before the window is the starting point for recovering to the window's first moments
  const anchor = backups.filter((b) => new Date(b.finishedAt).getTime() < cutoff).pop();
  const keep = new Set([...inWindow, ...(anchor ? [anchor] : [])].map((b) => b.id));
  const removedBackups: string[] = [];
  for (const b of backups) {
    if (keep.has(b.id)) continue;
    await rm(b.path, { recursive: true, force: true });
    removedBackups.push(b.id);
  }
  const kept = backups.filter((b) => keep.has(b.id));
  const removedWal = kept.length
    ? await dropSegmentsBefore(
        ctx.layout.walArchive,
        ctx.record.walSegmentBytes,
        kept.map((b) => segmentOf(parseLsn(b.startLsn), ctx.record.walSegmentBytes)).reduce((a, b) => (a < b ? a : b)),
      )
    : 0;
  return { removedBackups, removedWal };
}
