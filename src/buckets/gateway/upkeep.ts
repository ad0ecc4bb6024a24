/**
 * What keeps the gateway's store honest: request counts flushed every few seconds (metering bills them), and
 * the sweep that removes blobs no row names (a crash between writing a blob and committing its row, a failed
 * removal after a delete). Temp files of this host's interrupted writes go at start-up.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import type { BlobStore } from "../storage/types.js";
import * as repo from "./repo.js";

export class RequestCounter {
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly everyMs = 5000,
  ) {}

  count(bucketId: string): void {
    this.counts.set(bucketId, (this.counts.get(bucketId) ?? 0) + 1);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.everyMs);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    if (!this.counts.size) return;
    const batch = this.counts;
    this.counts = new Map();
    try {
      await repo.addRequestCounts(this.db, batch);
    } catch (err) {
      // kept for the next flush rather than lost
      for (const [b, n] of batch) this.counts.set(b, (this.counts.get(b) ?? 0) + n);
      this.log.warn({ err }, "flushing bucket request counts failed; retrying");
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

/**
 * Removes blobs that no object or part row names and that are older than `graceSeconds` (younger ones may
 * belong to an upload committing right now, on this or another gateway). Returns the number removed.
 */
export async function sweepOrphans(db: Db, store: BlobStore, graceSeconds: number, now = new Date()): Promise<number> {
  let removed = 0;
  let batch: string[] = [];
  const settle = async () => {
    const used = await repo.referencedBlobs(db, batch);
    const orphans = batch.filter((id) => !used.has(id));
    await store.remove(orphans);
    removed += orphans.length;
    batch = [];
  };
  for await (const blob of store.list()) {
    if (now.getTime() - blob.modified.getTime() < graceSeconds * 1000) continue;
    batch.push(blob.id);
    if (batch.length >= 500) await settle();
  }
  if (batch.length) await settle();
  return removed;
}
