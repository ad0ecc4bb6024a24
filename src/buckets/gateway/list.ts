/** ListBuckets, HeadBucket, GetBucketLocation, ListObjects (V2 and V1) and DeleteObjects. */
import { readSmallBody } from "./body.js";
import { bucketOf, checkKey, q1, requireWrite, sendEmpty, sendXml, type S3Context } from "./context.js";
import { S3Error } from "./errors.js";
import { dropBlobs, deleteKey } from "./objects.js";
import * as repo from "./repo.js";
import { quoted } from "./attributes.js";
import { isoDate, parseXml } from "./xml.js";

/** Greater than every key that starts with the prefix it follows (U+10FFFF sorts last in byte order). */
const PAST = "\u{10FFFF}";

export async function listBuckets(ctx: S3Context): Promise<void> {
  const k = ctx.auth.key;
  const buckets = await repo.bucketsOf(ctx.deps.db, { kind: k.owner_kind, id: k.owner_id }, k.bucket_ids);
  sendXml(ctx, 200, "ListAllMyBucketsResult", {
    Owner: { ID: k.owner_id, DisplayName: k.owner_id },
    Buckets: { Bucket: buckets.map((b) => ({ Name: b.name, CreationDate: isoDate(b.created_at) })) },
  });
}

export function headBucket(ctx: S3Context): void {
  bucketOf(ctx);
  sendEmpty(ctx, 200, { "x-amz-bucket-region": ctx.deps.config.region });
}

export function bucketLocation(ctx: S3Context): void {
  bucketOf(ctx);
  const region = ctx.deps.config.region;
  // S3 answers an empty constraint for us-east-1
  sendXml(ctx, 200, "LocationConstraint", region === "us-east-1" ? {} : { "#text": region });
}

interface Listing {
  contents: repo.ObjectRow[];
  prefixes: string[];
  truncated: boolean;
  /** where the next page starts (exclusive) */
  cursor: string;
}

async function collect(
  ctx: S3Context,
  prefix: string,
  delimiter: string,
  after: string,
  maxKeys: number,
): Promise<Listing> {
  const bucket = bucketOf(ctx);
  const out: Listing = { contents: [], prefixes: [], truncated: false, cursor: after };
  const count = () => out.contents.length + out.prefixes.length;
  for (;;) {
    if (count() >= maxKeys) {
      out.truncated = maxKeys > 0 && (await repo.listObjects(ctx.deps.db, bucket.id, prefix, out.cursor, 1)).length > 0;
      return out;
    }
    const limit = Math.min(1000, maxKeys - count() + 1);
    const rows = await repo.listObjects(ctx.deps.db, bucket.id, prefix, out.cursor, limit);
    if (!rows.length) return out;
    let skipped = false;
    for (const row of rows) {
      if (count() >= maxKeys) break;
      const i = delimiter ? row.key.indexOf(delimiter, prefix.length) : -1;
      if (i >= 0) {
        const common = row.key.slice(0, i + delimiter.length);
        out.prefixes.push(common);
        out.cursor = common + PAST;
        skipped = true;
        break; // the rest of this common prefix is skipped by the next query
      }
      out.contents.push(row);
      out.cursor = row.key;
    }
    if (!skipped && rows.length < limit && count() < maxKeys) return out;
  }
}

function maxKeysOf(ctx: S3Context): number {
  const raw = q1(ctx, "max-keys");
  if (raw === undefined) return 1000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new S3Error("InvalidArgument", "max-keys must be a non-negative integer.");
  return Math.min(n, 1000);
}

const urlEncode = (s: string) => encodeURIComponent(s).replace(/%2F/g, "/");

export async function listObjects(ctx: S3Context, v2: boolean): Promise<void> {
  const bucket = bucketOf(ctx);
  const prefix = q1(ctx, "prefix") ?? "";
  const delimiter = q1(ctx, "delimiter") ?? "";
  const encodingType = q1(ctx, "encoding-type");
  if (encodingType !== undefined && encodingType !== "url")
    throw new S3Error("InvalidArgument", "Invalid Encoding Method specified in Request");
  const enc = encodingType === "url" ? urlEncode : (s: string) => s;
  const maxKeys = maxKeysOf(ctx);
  let after: string;
  const token = q1(ctx, "continuation-token");
  if (v2) {
    if (token !== undefined) {
      after = Buffer.from(token, "base64url").toString("utf8");
      if (!token || Buffer.from(after, "utf8").toString("base64url") !== token)
        throw new S3Error("InvalidArgument", "The continuation token provided is incorrect.");
    } else after = q1(ctx, "start-after") ?? "";
  } else after = q1(ctx, "marker") ?? "";
  const listing = await collect(ctx, prefix, delimiter, after, maxKeys);
  const fetchOwner = !v2 || q1(ctx, "fetch-owner") === "true";
  const contents = listing.contents.map((o) => ({
    Key: enc(o.key),
    LastModified: isoDate(o.last_modified),
    ETag: quoted(o.etag),
    Size: o.size,
    StorageClass: "STANDARD",
    ...(fetchOwner ? { Owner: { ID: bucket.owner_id, DisplayName: bucket.owner_id } } : {}),
  }));
  const common = listing.prefixes.map((p) => ({ Prefix: enc(p) }));
  const base = {
    Name: bucket.name,
    Prefix: enc(prefix),
    ...(delimiter ? { Delimiter: enc(delimiter) } : {}),
    MaxKeys: maxKeys,
    ...(encodingType ? { EncodingType: encodingType } : {}),
    IsTruncated: listing.truncated,
  };
  if (v2) {
    sendXml(ctx, 200, "ListBucketResult", {
      ...base,
      KeyCount: contents.length + common.length,
      ...(token !== undefined ? { ContinuationToken: token } : {}),
      ...(q1(ctx, "start-after") !== undefined ? { StartAfter: enc(q1(ctx, "start-after")!) } : {}),
      ...(listing.truncated
        ? { NextContinuationToken: Buffer.from(listing.cursor, "utf8").toString("base64url") }
        : {}),
      Contents: contents,
      CommonPrefixes: common,
    });
  } else {
    // V1's NextMarker is only given with a delimiter; without one clients continue from the last key
    const next = listing.truncated && delimiter ? { NextMarker: enc(listing.cursor.replace(PAST, "")) } : {};
    sendXml(ctx, 200, "ListBucketResult", {
      ...base,
      Marker: enc(after),
      ...next,
      Contents: contents,
      CommonPrefixes: common,
    });
  }
}

export async function deleteObjects(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  const bucket = bucketOf(ctx);
  const doc = parseXml(await readSmallBody(ctx), "Delete");
  const objects = (doc.Object ?? []) as Record<string, unknown>[];
  if (!objects.length || objects.length > 1000)
    throw new S3Error("MalformedXML", "A Delete request names 1 to 1000 objects.");
  const quiet = String(doc.Quiet ?? "false").trim() === "true";
  const deleted: { Key: string }[] = [];
  const errors: { Key: string; Code: string; Message: string }[] = [];
  for (const o of objects) {
    const key = typeof o.Key === "string" ? o.Key : "";
    try {
      checkKey(key);
      dropBlobs(ctx.deps, await deleteKey(ctx.deps, bucket.id, key));
      deleted.push({ Key: key });
    } catch (err) {
      if (!(err instanceof S3Error)) throw err;
      errors.push({ Key: key, Code: err.code, Message: err.message });
    }
  }
  sendXml(ctx, 200, "DeleteResult", { Deleted: quiet ? [] : deleted, Error: errors });
}
