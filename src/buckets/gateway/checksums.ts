/**
 * What the gateway computes over an upload as it streams: MD5 (the ETag, Content-MD5), SHA-256 when the
 * payload hash was signed, and the additional checksums S3 clients send (x-amz-checksum-crc32, -crc32c, -sha1,
 * -sha256), each compared before the object is committed.
 */
import { createHash, type Hash } from "node:crypto";
import { crc32 } from "node:zlib";
import { S3Error } from "./errors.js";

export const CHECKSUM_ALGORITHMS = ["crc32", "crc32c", "sha1", "sha256"] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

const CRC32C_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

function crc32c(data: Uint8Array, previous: number): number {
  let c = ~previous;
  for (let i = 0; i < data.length; i++) c = CRC32C_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** One running checksum by algorithm; `digest` is the raw bytes (base64 in headers). */
export class Checksum {
  private crc = 0;
  private hash: Hash | null;
  constructor(readonly algorithm: ChecksumAlgorithm) {
    this.hash = algorithm === "sha1" || algorithm === "sha256" ? createHash(algorithm) : null;
  }
  update(data: Buffer): void {
    if (this.hash) this.hash.update(data);
    else if (this.algorithm === "crc32") this.crc = crc32(data, this.crc);
    else this.crc = crc32c(data, this.crc);
  }
  digest(): Buffer {
    return this.hash ? this.hash.digest() : u32(this.crc);
  }
}

export function checksumAlgorithm(name: string): ChecksumAlgorithm {
  const a = name.toLowerCase();
  if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(a))
    throw new S3Error(
      "InvalidRequest",
      `Checksum algorithm ${name} is not supported (use CRC32, CRC32C, SHA1 or SHA256).`,
    );
  return a as ChecksumAlgorithm;
}

/** The composite checksum of a multipart object: the checksum of the parts' raw checksums, with "-<parts>". */
export function compositeChecksum(algorithm: ChecksumAlgorithm, parts: string[]): string {
  const c = new Checksum(algorithm);
  for (const p of parts) c.update(Buffer.from(p, "base64"));
  return `${c.digest().toString("base64")}-${parts.length}`;
}

export interface DigestResult {
  md5: Buffer;
  sha256: string | null;
  checksums: Map<ChecksumAlgorithm, Buffer>;
}

/** Hashing elsewhere (the worker threads of digest-pool.ts). */
export interface RemoteHasher {
  open(opts: { sha256: boolean; algorithms: ChecksumAlgorithm[] }): RemoteDigests;
}
export interface RemoteDigests {
  update(chunk: Buffer): void;
  finish(): Promise<DigestResult>;
  drop(): void;
}

/** Everything computed over one upload's bytes as they pass: inline, or on a worker of the pool for large ones. */
export class UploadDigests {
  size = 0;
  private readonly md5: Hash | null = null;
  private readonly sha256: Hash | null = null;
  private readonly checksums = new Map<ChecksumAlgorithm, Checksum>();
  private readonly remote: RemoteDigests | null = null;

  constructor(opts: { sha256: boolean; algorithms: Iterable<ChecksumAlgorithm>; pool?: RemoteHasher | null }) {
    const algorithms = [...new Set(opts.algorithms)];
    if (opts.pool) {
      this.remote = opts.pool.open({ sha256: opts.sha256, algorithms });
      return;
    }
    this.md5 = createHash("md5");
    this.sha256 = opts.sha256 ? createHash("sha256") : null;
    for (const a of algorithms) this.checksums.set(a, new Checksum(a));
  }

  update(data: Buffer): void {
    this.size += data.length;
    if (this.remote) return this.remote.update(data);
    this.md5!.update(data);
    this.sha256?.update(data);
    for (const c of this.checksums.values()) c.update(data);
  }

  /** Once, after the last byte. */
  async result(): Promise<DigestResult> {
    if (this.remote) return this.remote.finish();
    return {
      md5: this.md5!.digest(),
      sha256: this.sha256?.digest("hex") ?? null,
      checksums: new Map([...this.checksums].map(([a, c]) => [a, c.digest()])),
    };
  }

  /** The upload failed: nothing more will come. */
  drop(): void {
    this.remote?.drop();
  }
}

/** The algorithms an upload's headers ask for (x-amz-checksum-* values, x-amz-sdk-checksum-algorithm, x-amz-trailer). */
export function requestedChecksums(headers: Record<string, string | string[] | undefined>): {
  algorithms: Set<ChecksumAlgorithm>;
  expected: Map<ChecksumAlgorithm, string>;
  trailer: ChecksumAlgorithm | null;
} {
  const algorithms = new Set<ChecksumAlgorithm>();
  const expected = new Map<ChecksumAlgorithm, string>();
  for (const a of CHECKSUM_ALGORITHMS) {
    const v = headers[`x-amz-checksum-${a}`];
    if (typeof v === "string") {
      algorithms.add(a);
      expected.set(a, v);
    }
  }
  if (typeof headers["x-amz-checksum-crc64nvme"] === "string")
    throw new S3Error(
      "InvalidRequest",
      "Checksum algorithm CRC64NVME is not supported (use CRC32, CRC32C, SHA1 or SHA256).",
    );
  const sdk = headers["x-amz-sdk-checksum-algorithm"];
  if (typeof sdk === "string") algorithms.add(checksumAlgorithm(sdk));
  let trailer: ChecksumAlgorithm | null = null;
  const t = headers["x-amz-trailer"];
  if (typeof t === "string" && t.trim()) {
    const name = t.trim().toLowerCase();
    if (!name.startsWith("x-amz-checksum-")) throw new S3Error("InvalidRequest", `Unsupported trailer ${t}.`);
    trailer = checksumAlgorithm(name.slice("x-amz-checksum-".length));
    algorithms.add(trailer);
  }
  return { algorithms, expected, trailer };
}

/** Compares what the client said with what passed; BadDigest names the algorithm. Returns the checksums to keep. */
export function verifyChecksums(
  result: DigestResult,
  expected: Map<ChecksumAlgorithm, string>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [a, digest] of result.checksums) {
    const got = digest.toString("base64");
    const want = expected.get(a);
    if (want !== undefined && want !== got)
      throw new S3Error("BadDigest", `The ${a.toUpperCase()} you specified did not match the calculated checksum.`);
    kept[a] = got;
  }
  return kept;
}
