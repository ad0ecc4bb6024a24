import type { Readable } from "node:stream";

/**
 * Where object bytes live: blobs named by uuid, written once, never changed. A blob belongs to an object only
 * once the metadata row naming it commits (gateway/repo.ts); until then, and after the row is gone, it is an
 * orphan the sweep removes. Backends: `filesystem` (filesystem.ts) and `s3` (s3.ts, an external S3 service).
 */
export interface BlobStore {
  readonly kind: "filesystem" | "s3";
  /**
   * Stores the bytes as blob `id`. The blob exists only once they are all durable; `beforePublish` runs then
   * (checksum comparisons) and a throw there discards them. A failed or interrupted write leaves no blob.
   */
  write(
    id: string,
    body: AsyncIterable<Buffer>,
    opts: { size: number | null; beforePublish?: () => unknown },
  ): Promise<number>;
  /** The bytes of blob `id`, or of [start, end] (inclusive) of it. */
  read(id: string, range?: { start: number; end: number }): Promise<Readable>;
  /**
   * Optional: [start, end] of a blob as one buffer, for small reads (no stream to set up and drain). Rejects
   * with ENOENT like `read` when the blob is gone.
   */
  readSmall?(id: string, range: { start: number; end: number }): Promise<Buffer>;
  /** A new blob `to` with the bytes of `from`. */
  copy(from: string, to: string): Promise<void>;
  /** Removes blobs; missing ones are no error. */
  remove(ids: string[]): Promise<void>;
  /** Every stored blob with its age, for the sweep of orphans. */
  list(): AsyncIterable<{ id: string; modified: Date }>;
  /** Removes what this host's interrupted writes left (start-up). */
  clearTemp(): Promise<number>;
}

export const isBlobId = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(s);
