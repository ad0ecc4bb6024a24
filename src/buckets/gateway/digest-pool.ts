/**
 * Digests of large uploads (MD5 for the ETag, SHA-256 of a signed payload, x-amz-checksum-*) computed on worker
 * threads, so hashing runs beside the socket reads and disk writes instead of between them: MD5 alone is slower
 * than the disk on small machines. Bytes go over in 1 MiB batches whose memory is transferred, not copied again.
 * Small uploads hash inline (checksums.ts), where a round trip to a worker would cost more than it saves.
 */
import { Worker } from "node:worker_threads";
import type { ChecksumAlgorithm, DigestResult, RemoteDigests, RemoteHasher } from "./checksums.js";

/** The worker: plain CommonJS evaluated in the thread, so it needs no TypeScript loader. */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createHash } = require("node:crypto");
const { crc32 } = require("node:zlib");
const T = new Int32Array(256);
for (let n = 0; n < 256; n++) { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1; T[n] = c; }
function crc32c(d, p) { let c = ~p; for (let i = 0; i < d.length; i++) c = T[(c ^ d[i]) & 0xff] ^ (c >>> 8); return ~c >>> 0; }
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); return b; };
const open = new Map();
parentPort.on("message", (m) => {
  if (m.op === "open") {
    open.set(m.id, {
      md5: createHash("md5"),
      sha256: m.sha256 ? createHash("sha256") : null,
      sums: m.algorithms.map((a) => ({ a, h: a === "sha1" || a === "sha256" ? createHash(a) : null, crc: 0 })),
    });
  } else if (m.op === "update") {
    const u = open.get(m.id);
    if (!u) return;
    const b = Buffer.from(m.data, 0, m.length);
    u.md5.update(b);
    if (u.sha256) u.sha256.update(b);
    for (const s of u.sums) {
      if (s.h) s.h.update(b);
      else if (s.a === "crc32") s.crc = crc32(b, s.crc);
      else s.crc = crc32c(b, s.crc);
    }
  } else if (m.op === "finish") {
    const u = open.get(m.id);
    open.delete(m.id);
    parentPort.postMessage({
      id: m.id,
      md5: u.md5.digest(),
      sha256: u.sha256 ? u.sha256.digest("hex") : null,
      sums: u.sums.map((s) => [s.a, s.h ? s.h.digest() : u32(s.crc)]),
    });
  } else if (m.op === "drop") open.delete(m.id);
});
`;

const STAGE_BYTES = 1024 * 1024;

export class DigestPool implements RemoteHasher {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, { resolve: (r: DigestResult) => void; reject: (e: Error) => void }>();
  private seq = 0;

  constructor(size: number) {
    for (let i = 0; i < size; i++) this.workers.push(this.spawn(i));
  }

  private spawn(slot: number): Worker {
    const w = new Worker(WORKER_SOURCE, { eval: true });
    w.unref();
    w.on(
      "message",
      (m: { id: number; md5: Uint8Array; sha256: string | null; sums: [ChecksumAlgorithm, Uint8Array][] }) => {
        const p = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        p?.resolve({
          md5: Buffer.from(m.md5),
          sha256: m.sha256,
          checksums: new Map(m.sums.map(([a, d]) => [a, Buffer.from(d)])),
        });
      },
    );
    w.on("error", (err) => {
      // every upload hashing there fails; a fresh worker takes the slot
      for (const [id, p] of this.waiting) if (id % this.workers.length === slot) p.reject(err);
      this.workers[slot] = this.spawn(slot);
    });
    return w;
  }

  /** Starts the digests of one upload. */
  open(opts: { sha256: boolean; algorithms: ChecksumAlgorithm[] }): RemoteDigests {
    const id = ++this.seq;
    const worker = this.workers[id % this.workers.length];
    worker.postMessage({ op: "open", id, sha256: opts.sha256, algorithms: opts.algorithms });
    return new WorkerDigests(id, worker, (resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** One upload's bytes on their way to a worker, in batches. */
class WorkerDigests implements RemoteDigests {
  private stage = Buffer.allocUnsafeSlow(STAGE_BYTES);
  private used = 0;
  private done = false;

  constructor(
    private readonly id: number,
    private readonly worker: Worker,
    private readonly expect: (resolve: (r: DigestResult) => void, reject: (e: Error) => void) => void,
  ) {}

  private send(): void {
    if (!this.used) return;
    const data = this.stage.buffer;
    this.worker.postMessage({ op: "update", id: this.id, data, length: this.used }, [data as ArrayBuffer]);
    this.stage = Buffer.allocUnsafeSlow(STAGE_BYTES);
    this.used = 0;
  }

  update(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const n = chunk.copy(this.stage, this.used, offset);
      this.used += n;
      offset += n;
      if (this.used === STAGE_BYTES) this.send();
    }
  }

  finish(): Promise<DigestResult> {
    this.send();
    this.done = true;
    const result = new Promise<DigestResult>((resolve, reject) => this.expect(resolve, reject));
    this.worker.postMessage({ op: "finish", id: this.id });
    return result;
  }

  drop(): void {
    if (this.done) return;
    this.done = true;
    this.worker.postMessage({ op: "drop", id: this.id });
  }
}
