/**
 * WAL arithmetic: LSNs, segment file names and timeline histories, as PostgreSQL defines them
 * (xlog_internal.h). Needed to find gaps in the archive without pg_waldump or pg_archivecleanup.
 */

export function parseLsn(lsn: string): bigint {
  const m = /^([0-9A-F]+)\/([0-9A-F]+)$/i.exec(lsn.trim());
  if (!m) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

export function formatLsn(v: bigint): string {
  return `${(v >> 32n).toString(16).toUpperCase()}/${(v & 0xffffffffn).toString(16).toUpperCase()}`;
}

export const SEGMENT_RE = /^([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]{8})$/;
export const HISTORY_RE = /^([0-9A-F]{8})\.history$/;

export function segmentsPerId(segBytes: number): bigint {
  return 0x100000000n / BigInt(segBytes);
}

export function segmentName(tli: number, segNo: bigint, segBytes: number): string {
  const per = segmentsPerId(segBytes);
  const hex = (v: bigint | number, w = 8) => v.toString(16).toUpperCase().padStart(w, "0");
  return hex(tli) + hex(segNo / per) + hex(segNo % per);
}

export function parseSegmentName(name: string, segBytes: number): { tli: number; segNo: bigint } | null {
  const m = SEGMENT_RE.exec(name);
  if (!m) return null;
  return { tli: parseInt(m[1], 16), segNo: BigInt(`0x${m[2]}`) * segmentsPerId(segBytes) + BigInt(`0x${m[3]}`) };
}

/** Segment holding the byte at `lsn`. */
export function segmentOf(lsn: bigint, segBytes: number): bigint {
  return lsn / BigInt(segBytes);
}

/** Segment holding the byte just before `lsn` (how PostgreSQL names the file an end-LSN belongs to). */
export function segmentBefore(lsn: bigint, segBytes: number): bigint {
  return (lsn - 1n) / BigInt(segBytes);
}

export interface TimelineSpan {
  tli: number;
  /** First LSN on this timeline (0 for timeline 1). */
  begin: bigint;
  /** LSN where the next timeline branched off; null for the newest. */
  end: bigint | null;
}

/**
 * Lineage of timeline `tli` from its history file text (lines "parentTLI<TAB>switchpoint<TAB>reason"),
 * oldest first. Timeline 1 has no history file.
 */
export function timelineLineage(tli: number, historyText: string | null): TimelineSpan[] {
  const spans: TimelineSpan[] = [];
  let begin = 0n;
  for (const line of (historyText ?? "").split("\n")) {
    const m = /^\s*(\d+)\s+([0-9A-F]+\/[0-9A-F]+)/i.exec(line);
    if (!m) continue;
    const end = parseLsn(m[2]);
    spans.push({ tli: Number(m[1]), begin, end });
    begin = end;
  }
  spans.push({ tli, begin, end: null });
  return spans;
}

/** Which timeline's copy of a segment recovery reads: the newest timeline that had begun by that segment. */
export function timelineForSegment(lineage: TimelineSpan[], segNo: bigint, segBytes: number): number {
  let chosen = lineage[0].tli;
  for (const span of lineage) {
    if (segmentOf(span.begin, segBytes) <= segNo) chosen = span.tli;
  }
  return chosen;
}

/** True when a point (tli, lsn) lies on the history that led to the newest timeline of `lineage`. */
export function onLineage(lineage: TimelineSpan[], tli: number, lsn: bigint): boolean {
  const span = lineage.find((s) => s.tli === tli);
  if (!span) return false;
  return span.end === null || lsn < span.end;
}
