/**
 * The default storage backend: one file per blob under `<dir>/blobs/<first two hex>/<id>`. A write goes to
 * `<dir>/tmp/<host id>/<id>`, is fsynced, then renamed into place and the directory fsynced, so a blob is either
 * all there and durable or not there at all; kill -9 mid-write leaves only the temp file, which this host's next
 * start removes (clearTemp). Several hosts may share the directory: each clears only its own temp files.
 */
import { closeSync, constants, createReadStream, fsync, openSync, readSync } from "node:fs";
import { promisify } from "node:util";
import { copyFile, mkdir, open, readdir, rename, rm, stat, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { isBlobId, type BlobStore } from "./types.js";

const BATCH_BYTES = 1024 * 1024;
const SYNC_EVERY_BYTES = 8 * 1024 * 1024;
/**
 * reads up to this size are done on the event loop (readSmall). Writes are not: creating and renaming files can
 * wait on the filesystem's journal behind other writers' fsyncs, which must never stall every request.
 */
const SYNC_READ_BYTES = 64 * 1024;

/** `length` bytes read by `readAt(buffer, offset)` until done or at the end of the file. */
function readRange(length: number, readAt: (buf: Buffer, at: number) => number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readAt(buf, got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

const fsyncFd = promisify(fsync);

/** Opened and closed on the event loop (microseconds); only the fsync waits in the thread pool. */
async function fsyncDir(dir: string): Promise<void> {
  const fd = openSync(dir, "r");
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}

async function writeAll(fh: FileHandle, chunks: Buffer[]): Promise<void> {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const { bytesWritten } = await fh.writev(chunks);
  if (bytesWritten < total) {
    // a short write (rare on regular files): the rest one buffer at a time
    let rest = Buffer.concat(chunks).subarray(bytesWritten);
    while (rest.length) rest = rest.subarray((await fh.write(rest)).bytesWritten);
  }
}

export class FilesystemBlobStore implements BlobStore {
  readonly kind = "filesystem" as const;
  private readonly made = new Set<string>();

  constructor(
    readonly dir: string,
    private readonly hostId: string,
  ) {}

  blobPath(id: string): string {
    if (!isBlobId(id)) throw new Error(`not a blob id: ${id}`);
    return path.join(this.dir, "blobs", id.slice(0, 2), id);
  }

  private get tmpDir(): string {
    return path.join(this.dir, "tmp", this.hostId);
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.made.add(dir);
  }

  /** Moves a complete, fsynced temp file into place, durably. */
  private async publish(tmp: string, id: string): Promise<void> {
    const final = this.blobPath(id);
    await this.ensureDir(path.dirname(final));
    await rename(tmp, final);
    await fsyncDir(path.dirname(final));
  }

  async write(id: string, body: AsyncIterable<Buffer>, opts: { beforePublish?: () => unknown }): Promise<number> {
    await this.ensureDir(this.tmpDir);
    const tmp = path.join(this.tmpDir, id);
    const fh = await open(tmp, "wx");
    let size = 0;
    try {
      // one write in flight while the next batch arrives; a large blob is flushed to disk as it grows (datasync
      // in the background), so the final fsync has little left to wait for
      let inflight: Promise<void> = Promise.resolve();
      let syncing: Promise<void> | null = null;
      let unsynced = 0;
      let batch: Buffer[] = [];
      let batchBytes = 0;
      for await (const chunk of body) {
        batch.push(chunk);
        batchBytes += chunk.length;
        size += chunk.length;
        if (batchBytes >= BATCH_BYTES) {
          await inflight;
          inflight = writeAll(fh, batch);
          unsynced += batchBytes;
          batch = [];
          batchBytes = 0;
          if (unsynced >= SYNC_EVERY_BYTES && !syncing) {
            unsynced = 0;
            const started = inflight.then(() => fh.datasync());
            syncing = started.finally(() => (syncing = null));
          }
        }
      }
      await inflight;
      await syncing;
      if (batch.length) await writeAll(fh, batch);
      await fh.sync();
      await fh.close();
      await opts.beforePublish?.();
      await this.publish(tmp, id);
      return size;
    } catch (err) {
      await fh.close().catch(() => {});
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async read(id: string, range?: { start: number; end: number }): Promise<Readable> {
    // opened first, so a missing blob fails before an answer has started
    const fh = await open(this.blobPath(id), "r");
    return createReadStream("", { fd: fh, highWaterMark: BATCH_BYTES, ...(range ?? {}) });
  }

  /**
   * Up to SYNC_READ_BYTES the blob is read on the event loop (open, pread, close: microseconds from the page cache,
   * as nginx reads files without aio threads), larger ranges through libuv's thread pool: three hand-offs to a pool
   * thread and back cost a small GET more than the read itself, and more again on a busy machine.
   */
  async readSmall(id: string, range: { start: number; end: number }): Promise<Buffer> {
    const length = range.end - range.start + 1;
    if (length <= SYNC_READ_BYTES) {
      const fd = openSync(this.blobPath(id), "r");
      try {
        return readRange(length, (buf, at) => readSync(fd, buf, at, length - at, range.start + at));
      } finally {
        closeSync(fd);
      }
    }
    const fh = await open(this.blobPath(id), "r");
    try {
      const buf = Buffer.allocUnsafe(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, range.start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === length ? buf : buf.subarray(0, got);
    } finally {
      // the answer need not wait for the close
      void fh.close().catch(() => {});
    }
  }

  async copy(from: string, to: string): Promise<void> {
    await this.ensureDir(this.tmpDir);
    const tmp = path.join(this.tmpDir, to);
    try {
      await copyFile(this.blobPath(from), tmp, constants.COPYFILE_FICLONE);
      const fh = await open(tmp, "r+");
      await fh.sync();
      await fh.close();
      await this.publish(tmp, to);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) await rm(this.blobPath(id), { force: true });
  }

  async *list(): AsyncIterable<{ id: string; modified: Date }> {
    const root = path.join(this.dir, "blobs");
    const shards = await readdir(root).catch(() => [] as string[]);
    for (const shard of shards) {
      for (const name of await readdir(path.join(root, shard)).catch(() => [] as string[])) {
        if (!isBlobId(name)) continue;
        const st = await stat(path.join(root, shard, name)).catch(() => null);
        if (st) yield { id: name, modified: st.mtime };
      }
    }
  }

  async clearTemp(): Promise<number> {
    const names = await readdir(this.tmpDir).catch(() => [] as string[]);
    await rm(this.tmpDir, { recursive: true, force: true });
    this.made.delete(this.tmpDir);
    return names.length;
  }

  /** Bytes the backend holds (blobs and temp files), for the crash test and the operator. */
  async usedBytes(): Promise<number> {
    let total = 0;
    for (const sub of ["blobs", "tmp"]) {
      const walk = async (dir: string): Promise<void> => {
        for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) await walk(p);
          else total += (await stat(p).catch(() => ({ size: 0 }))).size;
        }
      };
      await walk(path.join(this.dir, sub));
    }
    return total;
  }
}
