import { existsSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { BackupInfo, WalContinuity } from "../types.js";
import {
  HISTORY_RE,
  formatLsn,
  onLineage,
  parseLsn,
  parseSegmentName,
  segmentName,
  segmentOf,
  timelineForSegment,
  timelineLineage,
  type TimelineSpan,
} from "./wal.js";

/** The continuous WAL archive of one instance ($DATA_DIR/backups/<id>/wal), filled by archive_command. */

export async function archivedSegments(
  walArchive: string,
  segBytes: number,
): Promise<{ name: string; tli: number; segNo: bigint }[]> {
  if (!existsSync(walArchive)) return [];
  const out: { name: string; tli: number; segNo: bigint }[] = [];
  for (const name of await readdir(walArchive)) {
    const parsed = parseSegmentName(name, segBytes);
    if (parsed) out.push({ name, ...parsed });
  }
  return out.sort((a, b) => (a.segNo === b.segNo ? a.tli - b.tli : a.segNo < b.segNo ? -1 : 1));
}

/** Archived segments as backups of kind "wal" (what GET /v1/backups indexes). */
export async function walBackups(instanceId: string, walArchive: string, segBytes: number): Promise<BackupInfo[]> {
  const out: BackupInfo[] = [];
  for (const seg of await archivedSegments(walArchive, segBytes)) {
    const file = path.join(walArchive, seg.name);
    const st = await stat(file).catch(() => null);
    if (!st) continue;
    const start = seg.segNo * BigInt(segBytes);
    out.push({
      id: seg.name,
      instanceId,
      kind: "wal",
      label: null,
      status: "complete",
      sizeBytes: st.size,
      startedAt: st.mtime.toISOString(),
      finishedAt: st.mtime.toISOString(),
      startLsn: formatLsn(start),
      stopLsn: formatLsn(start + BigInt(segBytes)),
      timeline: seg.tli,
      manifestPath: null,
      path: file,
    });
  }
  return out;
}

export async function readLineage(walArchive: string, tli: number): Promise<TimelineSpan[]> {
  if (tli <= 1) return timelineLineage(1, null);
  const file = path.join(walArchive, `${tli.toString(16).toUpperCase().padStart(8, "0")}.history`);
  const text = existsSync(file) ? await readFile(file, "utf8") : null;
  return timelineLineage(tli, text);
}

export async function newestArchivedTimeline(walArchive: string): Promise<number> {
  if (!existsSync(walArchive)) return 1;
  let tli = 1;
  for (const name of await readdir(walArchive)) {
    const h = HISTORY_RE.exec(name);
    if (h) tli = Math.max(tli, parseInt(h[1], 16));
  }
  return tli;
}

export interface LiveWalPosition {
  /** Timeline the server is writing now. */
  timeline: number;
  /** Segment being written now: not expected in the archive yet. */
  currentSegNo: bigint;
  /** Segments with a .ready file in pg_wal/archive_status (finished, waiting for the archiver). */
  ready: Set<string>;
  archiverFailure: { wal: string; at: string } | null;
}

/**
 * Checks that every segment from the latest usable base backup up to now is in the archive, i.e.
 * that recovery to any moment since that backup is possible. Without a live server, "now" is the
 * newest archived segment.
 */
export async function checkContinuity(
  walArchive: string,
  segBytes: number,
  backups: BackupInfo[],
  live: LiveWalPosition | null,
): Promise<WalContinuity> {
  const segments = await archivedSegments(walArchive, segBytes);
  const names = new Set(segments.map((s) => s.name));
  const timeline = live?.timeline ?? (await newestArchivedTimeline(walArchive));
  const lineage = await readLineage(walArchive, timeline);
  const empty: WalContinuity = {
    ok: false,
    problem: null,
    baseBackupId: null,
    timeline,
    fromSegment: null,
    toSegment: null,
    checkedSegments: 0,
    missing: [],
    pending: [],
    archiverFailure: live?.archiverFailure ?? null,
  };
  if (timeline > 1 && lineage.length === 1) {
    return { ...empty, problem: `the history file of timeline ${timeline} is missing from the archive` };
  }
  // the newest backup that lies on the current history (a backup from an abandoned branch cannot lead here)
  const base = [...backups].reverse().find((b) => onLineage(lineage, b.timeline, parseLsn(b.startLsn)));
  if (!base) return { ...empty, problem: "no base backup yet: point-in-time recovery needs one" };
  const from = segmentOf(parseLsn(base.startLsn), segBytes);
  let to: bigint;
  if (live) {
    to = live.currentSegNo - 1n;
  } else {
    const onTimeline = segments.filter((s) => lineage.some((l) => l.tli === s.tli));
    to = onTimeline.length ? onTimeline[onTimeline.length - 1].segNo : from - 1n;
  }
  const missing: string[] = [];
  const pending: string[] = [];
  let checked = 0;
  for (let seg = from; seg <= to; seg++) {
    checked++;
    const name = segmentName(timelineForSegment(lineage, seg, segBytes), seg, segBytes);
    if (names.has(name)) continue;
    if (live?.ready.has(name)) pending.push(name);
    else missing.push(name);
  }
  const problem = missing.length
    ? `${missing.length} WAL segment(s) missing from the archive since base backup ${base.id} (first: ${missing[0]}); take a new base backup`
    : live?.archiverFailure && pending.length
      ? `WAL archiving is failing (last failure on ${live.archiverFailure.wal} at ${live.archiverFailure.at})`
      : null;
  return {
    ok: missing.length === 0 && problem === null,
    problem,
    baseBackupId: base.id,
    timeline,
    fromSegment: segmentName(timelineForSegment(lineage, from, segBytes), from, segBytes),
    toSegment: to >= from ? segmentName(timelineForSegment(lineage, to, segBytes), to, segBytes) : null,
    checkedSegments: checked,
    missing,
    pending,
    archiverFailure: live?.archiverFailure ?? null,
  };
}

/** Names of .ready files in a data directory's archive_status (segments not yet archived). */
export async function readySegments(dataDir: string): Promise<Set<string>> {
  const dir = path.join(dataDir, "pg_wal", "archive_status");
  if (!existsSync(dir)) return new Set();
  return new Set((await readdir(dir)).filter((n) => n.endsWith(".ready")).map((n) => n.slice(0, -".ready".length)));
}

/** Deletes archived segments older than `keepFromSegNo` (history files are tiny and always kept). */
export async function dropSegmentsBefore(walArchive: string, segBytes: number, keepFromSegNo: bigint): Promise<number> {
  let removed = 0;
  for (const seg of await archivedSegments(walArchive, segBytes)) {
    if (seg.segNo >= keepFromSegNo) continue;
    await rm(path.join(walArchive, seg.name), { force: true });
    removed++;
  }
  // partial segments left by promotions follow the same rule
  for (const name of existsSync(walArchive) ? await readdir(walArchive) : []) {
    const m = /^([0-9A-F]{24})\.partial$/.exec(name);
    const parsed = m ? parseSegmentName(m[1], segBytes) : null;
    if (parsed && parsed.segNo < keepFromSegNo) {
      await rm(path.join(walArchive, name), { force: true });
      removed++;
    }
  }
  return removed;
}
