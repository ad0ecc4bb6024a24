/**
 * aws-chunked request bodies: `<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n ... 0...\r\n[trailers]\r\n`.
 * Signed streams (STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]) chain each chunk's signature to the previous
 * one, starting from the request's own signature; every chunk is checked when its last byte has arrived, so a
 * bad chunk fails the upload before anything is committed. Trailers carry checksums (x-amz-checksum-*).
 */
import { createHash } from "node:crypto";
import { S3Error } from "./errors.js";
import { EMPTY_SHA256, sameSignature, type SigningContext } from "./sigv4.js";

export const STREAMING_SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
export const STREAMING_SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
export const STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
export const STREAMING_MODES = [STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER];

const MAX_LINE = 4096;
const CRLF = Buffer.from("\r\n");

export interface ChunkedOptions {
  /** present for signed streams: the chain starts from the request's signature */
  signing: SigningContext | null;
  /** the trailer lines (lowercase names) once the stream ended */
  onTrailers?: (trailers: Record<string, string>) => void;
}

const malformed = (what: string) => new S3Error("IncompleteBody", `The chunked body is malformed: ${what}.`);

async function chunkSignature(ctx: SigningContext, previous: string, dataHash: string): Promise<string> {
  const toSign = ["AWS4-HMAC-SHA256-PAYLOAD", ctx.longDate, ctx.scope, previous, EMPTY_SHA256, dataHash].join("\n");
  return ctx.signer.sign(toSign, {
    signingDate: ctx.signingDate,
    signingRegion: ctx.region,
    signingService: ctx.service,
  });
}

async function trailerSignature(ctx: SigningContext, previous: string, trailerText: string): Promise<string> {
  const hash = createHash("sha256").update(trailerText).digest("hex");
  const toSign = ["AWS4-HMAC-SHA256-TRAILER", ctx.longDate, ctx.scope, previous, hash].join("\n");
  return ctx.signer.sign(toSign, {
    signingDate: ctx.signingDate,
    signingRegion: ctx.region,
    signingService: ctx.service,
  });
}

const mismatch = () =>
  new S3Error(
    "SignatureDoesNotMatch",
    "A chunk signature does not match: the chunked upload was not signed with this key.",
  );

/** Decodes (and for signed streams verifies) an aws-chunked body, yielding the payload bytes. */
export async function* decodeChunked(source: AsyncIterable<Buffer>, opts: ChunkedOptions): AsyncGenerator<Buffer> {
  const it = source[Symbol.asyncIterator]();
  let buf: Buffer = Buffer.alloc(0);
  let ended = false;
  const more = async (): Promise<boolean> => {
    if (ended) return false;
    const next = await it.next();
    if (next.done) {
      ended = true;
      return false;
    }
    buf = buf.length ? Buffer.concat([buf, next.value]) : next.value;
    return true;
  };
  const line = async (): Promise<string> => {
    for (;;) {
      const i = buf.indexOf(CRLF);
      if (i >= 0) {
        const text = buf.subarray(0, i).toString("latin1");
        buf = buf.subarray(i + 2);
        return text;
      }
      if (buf.length > MAX_LINE) throw malformed("a chunk header is too long");
      if (!(await more())) throw malformed("the body ended inside a chunk header");
    }
  };
  let previous = opts.signing?.seedSignature ?? "";
  for (;;) {
    const header = await line();
    const [sizeText, ...exts] = header.split(";");
    if (!/^[0-9a-fA-F]{1,16}$/.test(sizeText)) throw malformed(`bad chunk size "${sizeText.slice(0, 20)}"`);
    const size = parseInt(sizeText, 16);
    let claimed: string | null = null;
    for (const ext of exts) if (ext.startsWith("chunk-signature=")) claimed = ext.slice("chunk-signature=".length);
    if (opts.signing && claimed === null) throw mismatch();
    const hash = opts.signing ? createHash("sha256") : null;
    let left = size;
    while (left > 0) {
      if (!buf.length && !(await more())) throw malformed("the body ended inside a chunk");
      const take = buf.subarray(0, Math.min(left, buf.length));
      buf = buf.subarray(take.length);
      left -= take.length;
      hash?.update(take);
      yield take;
    }
    if (opts.signing) {
      const expected = await chunkSignature(opts.signing, previous, hash!.digest("hex"));
      if (!sameSignature(expected, claimed!.toLowerCase())) throw mismatch();
      previous = expected;
    }
    if (size === 0) break;
    while (buf.length < 2) if (!(await more())) throw malformed("a chunk is not followed by CRLF");
    if (buf[0] !== 13 || buf[1] !== 10) throw malformed("a chunk is longer than its size");
    buf = buf.subarray(2);
  }
  // trailers: name:value lines up to an empty line (or the end of the body)
  const trailers: Record<string, string> = {};
  let trailerText = "";
  let trailerSig: string | null = null;
  for (;;) {
    if (!buf.length && !(await more())) break;
    const text = await line();
    if (text === "") break;
    const i = text.indexOf(":");
    if (i <= 0) throw malformed("a trailer line has no name");
    const name = text.slice(0, i).trim().toLowerCase();
    const value = text.slice(i + 1).trim();
    if (name === "x-amz-trailer-signature") trailerSig = value;
    else {
      trailers[name] = value;
      trailerText += `${name}:${value}\n`;
    }
  }
  if (opts.signing && Object.keys(trailers).length) {
    if (
      !trailerSig ||
      !sameSignature(await trailerSignature(opts.signing, previous, trailerText), trailerSig.toLowerCase())
    )
      throw mismatch();
  }
  opts.onTrailers?.(trailers);
}
