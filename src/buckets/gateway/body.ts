/**
 * A request body as the operations consume it: plain or aws-chunked (decoded, chunk signatures checked), sized,
 * and digested as it passes (MD5 for the ETag, SHA-256 when the payload hash was signed, requested checksums).
 * `finish` compares everything the client claimed once the last byte arrived; a mismatch throws before anything
 * is committed.
 */
import { UNSIGNED_PAYLOAD } from "@smithy/signature-v4";
import { decodeChunked, STREAMING_MODES, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER } from "./chunked.js";
import {
  requestedChecksums,
  UploadDigests,
  verifyChecksums,
  type ChecksumAlgorithm,
  type DigestResult,
} from "./checksums.js";
import { S3Error } from "./errors.js";
import type { S3Context } from "./context.js";

/** uploads from this size on are hashed on a worker thread (digest-pool.ts) */
const REMOTE_DIGEST_BYTES = 1024 * 1024;

export interface UploadBody {
  stream: AsyncIterable<Buffer>;
  /** the payload size the client announced (decoded size for aws-chunked) */
  size: number;
  /** after the stream ended: verifies the claims; the MD5 (hex) and the checksums to keep */
  finish(): Promise<{ md5: string; checksums: Record<string, string> }>;
}

const header = (ctx: S3Context, name: string): string | undefined => {
  const v = ctx.req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function uploadBody(
  ctx: S3Context,
  opts: { maxBytes: number; extraAlgorithms?: ChecksumAlgorithm[] },
): UploadBody {
  const payloadHash = ctx.auth.payloadHash;
  const chunked = STREAMING_MODES.includes(payloadHash);
  const lengthHeader = chunked ? "x-amz-decoded-content-length" : "content-length";
  const raw = header(ctx, lengthHeader);
  if (raw === undefined) {
    if (!chunked && header(ctx, "transfer-encoding") === undefined) {
      // no body at all (an empty PUT from some clients)
    } else throw new S3Error("MissingContentLength", `You must provide the ${lengthHeader} HTTP header.`);
  }
  const size = raw === undefined ? 0 : Number(raw);
  if (!Number.isSafeInteger(size) || size < 0)
    throw new S3Error("InvalidArgument", `${lengthHeader} is not a valid length.`);
  if (size > opts.maxBytes)
    throw new S3Error("EntityTooLarge", "Your proposed upload exceeds the maximum allowed size.", {
      MaxSizeAllowed: String(opts.maxBytes),
    });
  const hexPayload = !chunked && payloadHash !== UNSIGNED_PAYLOAD;
  if (hexPayload && !/^[0-9a-f]{64}$/.test(payloadHash))
    throw new S3Error(
      "InvalidArgument",
      "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-* or a SHA-256 hex digest.",
    );
  const requested = requestedChecksums(ctx.req.headers);
  if (requested.trailer && !chunked) throw new S3Error("InvalidRequest", "x-amz-trailer needs an aws-chunked body.");
  const md5Header = header(ctx, "content-md5");
  if (md5Header !== undefined && Buffer.from(md5Header, "base64").length !== 16)
    throw new S3Error("InvalidDigest", "The Content-MD5 you specified is not valid.");
  const digests = new UploadDigests({
    sha256: hexPayload,
    algorithms: [...requested.algorithms, ...(opts.extraAlgorithms ?? [])],
    pool: size >= REMOTE_DIGEST_BYTES ? ctx.deps.digests : null,
  });
  const signed = payloadHash === STREAMING_SIGNED || payloadHash === STREAMING_SIGNED_TRAILER;
  let trailers: Record<string, string> = {};
  const source: AsyncIterable<Buffer> = chunked
    ? decodeChunked(ctx.req, { signing: signed ? ctx.auth.signing : null, onTrailers: (t) => (trailers = t) })
    : ctx.req;
  let result: Promise<DigestResult> | null = null;
  const stream = (async function* () {
    try {
      for await (const chunk of source) {
        digests.update(chunk);
        if (digests.size > size) throw new S3Error("IncompleteBody", "The body is longer than its announced length.");
        yield chunk;
      }
      if (digests.size !== size)
        throw new S3Error(
          "IncompleteBody",
          "You did not provide the number of bytes specified by the Content-Length HTTP header.",
        );
      result = digests.result();
    } finally {
      if (!result) digests.drop();
    }
  })();
  let finished: Promise<{ md5: string; checksums: Record<string, string> }> | null = null;
  const verify = async () => {
    if (!result) throw new Error("finish before the body ended");
    const r = await result;
    if (r.sha256 !== null && r.sha256 !== payloadHash)
      throw new S3Error(
        "XAmzContentSHA256Mismatch",
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
      );
    if (md5Header !== undefined && !r.md5.equals(Buffer.from(md5Header, "base64")))
      throw new S3Error("BadDigest", "The Content-MD5 you specified did not match what we received.");
    const expected = new Map(requested.expected);
    if (requested.trailer) {
      const value = trailers[`x-amz-checksum-${requested.trailer}`];
      if (value === undefined)
        throw new S3Error("InvalidRequest", `The trailer x-amz-checksum-${requested.trailer} is missing.`);
      expected.set(requested.trailer, value);
    }
    return { md5: r.md5.toString("hex"), checksums: verifyChecksums(r, expected) };
  };
  return {
    stream,
    size,
    finish: () => (finished ??= verify()),
  };
}

/** A small request body (XML documents), read whole and verified; limited to `maxBytes`. */
export async function readSmallBody(ctx: S3Context, maxBytes = 2 * 1024 * 1024): Promise<string> {
  const body = uploadBody(ctx, { maxBytes });
  const chunks: Buffer[] = [];
  for await (const c of body.stream) chunks.push(c);
  await body.finish();
  return Buffer.concat(chunks).toString("utf8");
}
