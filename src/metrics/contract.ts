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

/**
 * What a running server says of itself at one moment (the database provider's `sample`). Counters are the server's
 * totals since its statistics began (the sampler takes deltas); the platform's own sessions are left out.
 */
export interface ServerSample {
  /** client sessions now */
  connections: number;
  maxConnections: number;
  commitsTotal: number;
  blocksHitTotal: number;
  blocksReadTotal: number;
  /** every database of the server, on disk */
  sizeBytes: number;
  /** with HA: how far the standby's replay is behind; null without a streaming standby */
  replicationLagBytes: number | null;
  replicationLagSeconds: number | null;
  /** ISO 8601; null: none yet */
  lastBaseBackupAt: string | null;
  lastArchivedWalAt: string | null;
}

/** One running server's figures now, with the database it serves and that database's owner. */
export interface DatabaseServerSample extends ServerSample {
  databaseId: string;
  owner: Owner;
}

export interface DatabaseSampleSource {
  /** every running database whose primary this host holds; one that fails to answer is left out (logged) */
  sampleHost(hostId: string): Promise<DatabaseServerSample[]>;
}
