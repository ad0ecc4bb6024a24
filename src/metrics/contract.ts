/**
 * What the metrics area asks of others through the kernel: the databases area's per-minute figures of the managed
 * servers a host holds ("databaseSamples"; absent: databases have no series).
 */
import type { Owner } from "../kernel/owner.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    databaseSamples: DatabaseSampleSource;
  }
}

/** One running server's figures now; counters are the server's totals (the sampler takes deltas). */
export interface DatabaseServerSample {
  databaseId: string;
  owner: Owner;
  connections: number;
  maxConnections: number;
  commitsTotal: number;
  blocksHitTotal: number;
  blocksReadTotal: number;
  sizeBytes: number;
  replicationLagBytes: number | null;
  replicationLagSeconds: number | null;
  /** ISO 8601; null: none yet */
  lastBaseBackupAt: string | null;
  lastArchivedWalAt: string | null;
}

export interface DatabaseSampleSource {
  /** every running database whose primary this host holds; one that fails to answer is left out (logged) */
  sampleHost(hostId: string): Promise<DatabaseServerSample[]>;
}
