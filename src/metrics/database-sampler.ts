import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { DatabaseServerSample } from "./contract.js";
import { addDatabaseSamples, previousDatabaseSamples, type DatabaseSampleRow } from "./series-repo.js";

/** a previous sample older than this starts no delta (the server was stopped or the sampler down meanwhile) */
const PREVIOUS_WITHIN_MS = 10 * 60_000;

const ageSeconds = (iso: string | null, now: number): number | null =>
  iso === null ? null : Math.max(0, Math.round((now - Date.parse(iso)) / 1000));

/** The delta of a counter since the previous sample; null when there is none or the server's counters were reset. */
const delta = (now: number, before: number | undefined): number | null =>
  before === undefined || now < before ? null : now - before;

/**
 * This host's per-minute database sampling: the databases area answers each running server's figures (through the
 * provider's admin session, capability "databaseSamples"); deltas are taken from the previous stored sample, so a
 * platform restart loses none. A second pass in the same minute adds its delta to the minute's row.
 */
export async function sampleDatabases(
  deps: { db: Db; kernel: Kernel; hostId: string; log: FastifyBaseLogger },
  now = Date.now(),
): Promise<number> {
  const source = deps.kernel.use("databaseSamples");
  if (!source) return 0;
  const samples: DatabaseServerSample[] = await source.sampleHost(deps.hostId);
  if (!samples.length) return 0;
  const minute = now - (now % 60_000);
  const previous = await previousDatabaseSamples(
    deps.db,
    samples.map((s) => s.databaseId),
    PREVIOUS_WITHIN_MS,
    now,
  );
  const rows = samples.map((s): DatabaseSampleRow => {
    const p = previous.get(s.databaseId);
    const commits = delta(s.commitsTotal, p?.commitsTotal);
    const hit = delta(s.blocksHitTotal, p?.blocksHitTotal);
    const read = delta(s.blocksReadTotal, p?.blocksReadTotal);
    const sameMinute = p?.minute === minute;
    const add = (d: number | null, before: number | null | undefined) =>
      d === null ? null : sameMinute ? (before ?? 0) + d : d;
    const elapsed = p && commits !== null ? Math.max(0, (now - p.sampledAt) / 1000) : null;
    return {
      databaseId: s.databaseId,
      minute,
      sampledAt: now,
      owner: s.owner,
      connections: s.connections,
      maxConnections: s.maxConnections,
      commitsTotal: s.commitsTotal,
      blocksHitTotal: s.blocksHitTotal,
      blocksReadTotal: s.blocksReadTotal,
      commits: add(commits, p?.commits),
      blocksHit: add(hit, p?.blocksHit),
      blocksRead: add(read, p?.blocksRead),
      coveredSeconds: add(elapsed, p?.coveredSeconds),
      sizeBytes: s.sizeBytes,
      replicationLagBytes: s.replicationLagBytes,
      replicationLagSeconds: s.replicationLagSeconds,
      baseBackupAgeSeconds: ageSeconds(s.lastBaseBackupAt, now),
      archivedWalAgeSeconds: ageSeconds(s.lastArchivedWalAt, now),
    };
  });
  await addDatabaseSamples(deps.db, rows);
  return rows.length;
}
