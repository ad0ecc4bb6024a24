/** An object's attributes as headers: what a PUT stores, what GET and HEAD answer, and S3's conditional requests. */
import type { IncomingHttpHeaders } from "node:http";
import { S3Error } from "./errors.js";
import type { ObjectRow, WriteConditions } from "./repo.js";

const STORED_HEADERS = ["cache-control", "content-disposition", "content-encoding", "content-language", "expires"];
const MAX_METADATA_BYTES = 2048;

export interface ObjectAttributes {
  content_type: string;
  headers: Record<string, string>;
  metadata: Record<string, string>;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(",") : v);

/** Content-Type, the stored standard headers and x-amz-meta-* (at most 2 KB) of a request. */
export function attributesFrom(headers: IncomingHttpHeaders): ObjectAttributes {
  const stored: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    let v = one(headers[name]);
    if (name === "content-encoding" && v !== undefined) {
      // aws-chunked describes the transfer, not the object
      v = v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s && s !== "aws-chunked")
        .join(",");
      if (!v) continue;
    }
    if (v !== undefined) stored[name] = v;
  }
  const metadata: Record<string, string> = {};
  let bytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith("x-amz-meta-")) continue;
    const v = one(value) ?? "";
    const short = name.slice("x-amz-meta-".length);
    metadata[short] = v;
    bytes += Buffer.byteLength(short) + Buffer.byteLength(v);
  }
  if (bytes > MAX_METADATA_BYTES)
    throw new S3Error("MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size.");
  return { content_type: one(headers["content-type"]) || "binary/octet-stream", headers: stored, metadata };
}

export const quoted = (etag: string) => `"${etag}"`;

/** The headers GET and HEAD answer for an object (before Range and the body). */
export function objectHeaders(
  o: ObjectRow,
  query: Record<string, string | string[]>,
  withChecksums: boolean,
): Record<string, string | number> {
  const h: Record<string, string | number> = {
    "content-type": o.content_type,
    etag: quoted(o.etag),
    "last-modified": o.last_modified.toUTCString(),
    "accept-ranges": "bytes",
  };
  for (const [name, value] of Object.entries(o.headers)) h[name] = value;
  for (const [name, value] of Object.entries(o.metadata)) h[`x-amz-meta-${name}`] = value;
  if (o.blobs.length > 1) h["x-amz-mp-parts-count"] = o.blobs.length;
  if (withChecksums) {
    for (const [a, v] of Object.entries(o.checksums)) h[`x-amz-checksum-${a}`] = v;
    if (Object.keys(o.checksums).length)
      h["x-amz-checksum-type"] = Object.values(o.checksums).some((v) => v.includes("-")) ? "COMPOSITE" : "FULL_OBJECT";
  }
  // presigned GETs may override what the answer says (response-content-type, ...)
  for (const name of [
    "content-type",
    "content-language",
    "expires",
    "cache-control",
    "content-disposition",
    "content-encoding",
  ]) {
    const v = query[`response-${name}`];
    if (typeof v === "string") h[name] = v;
  }
  return h;
}

const etagList = (v: string) => v.split(",").map((s) => s.trim().replace(/^W\//, "").replace(/^"|"$/g, ""));

function dateOf(v: string | undefined): Date | null {
  if (v === undefined) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * GET/HEAD conditions (RFC 9110 order as S3 applies them): If-Match and If-Unmodified-Since fail with 412,
 * If-None-Match and If-Modified-Since with 304. `prefix` reads the x-amz-copy-source-if-* forms of CopyObject,
 * where every failure is 412.
 */
export function checkConditions(o: ObjectRow, headers: IncomingHttpHeaders, prefix = ""): void {
  const get = (name: string) => one(headers[`${prefix}${name}`]);
  const copy = prefix !== "";
  const modified = Math.floor(o.last_modified.getTime() / 1000) * 1000;
  const ifMatch = get("if-match");
  const ifNoneMatch = get("if-none-match");
  const failed = () =>
    new S3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.", {
      Condition: "If-Match",
    });
  const notModified = () => (copy ? failed() : new S3Error("NotModified", "Not Modified"));
  if (ifMatch !== undefined && !(ifMatch.trim() === "*" || etagList(ifMatch).includes(o.etag))) throw failed();
  const unmodifiedSince = dateOf(get("if-unmodified-since"));
  if (ifMatch === undefined && unmodifiedSince && modified > unmodifiedSince.getTime()) throw failed();
  if (ifNoneMatch !== undefined && (ifNoneMatch.trim() === "*" || etagList(ifNoneMatch).includes(o.etag)))
    throw notModified();
  const modifiedSince = dateOf(get("if-modified-since"));
  if (ifNoneMatch === undefined && modifiedSince && modified <= modifiedSince.getTime()) throw notModified();
}

const preconditionFailed = (condition: string) =>
  new S3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.", {
    Condition: condition,
  });

/** Conditional writes: `If-None-Match: *` (only when no object has the key) and `If-Match: <etag>` (only over it). */
export function writeConditionsFrom(headers: IncomingHttpHeaders): WriteConditions {
  const ifNoneMatch = one(headers["if-none-match"]);
  const ifMatch = one(headers["if-match"]);
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== "*")
    throw new S3Error("NotImplemented", "If-None-Match on a write takes only *.");
  return { ifNoneMatch: ifNoneMatch !== undefined, ifMatch: ifMatch === undefined ? null : etagList(ifMatch) };
}

/** Checks write conditions against the current object (checked again where the new object commits). */
export function checkWriteConditions(current: ObjectRow | null, cond: WriteConditions): void {
  if (cond.ifNoneMatch && current) throw preconditionFailed("If-None-Match");
  if (cond.ifMatch !== null) {
    if (!current) throw new S3Error("NoSuchKey", "The specified key does not exist.");
    if (!cond.ifMatch.includes(current.etag)) throw preconditionFailed("If-Match");
  }
}

/** Range: bytes=a-b | a- | -n of an object of `size` bytes; null: the whole object. */
export function parseRange(value: string | undefined, size: number): { start: number; end: number } | null {
  if (value === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null; // several ranges or nonsense: S3 answers the whole object
  let start: number;
  let end: number;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0) throw invalidRange(size);
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== "" && Number(m[2]) < start) return null;
  }
  if (start >= size) throw invalidRange(size);
  return { start, end };
}

const invalidRange = (size: number) =>
  new S3Error("InvalidRange", "The requested range is not satisfiable.", { ActualObjectSize: String(size) });
