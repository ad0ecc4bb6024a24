/** PutObject, GetObject, HeadObject, DeleteObject and CopyObject. */
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  attributesFrom,
  checkConditions,
  checkWriteConditions,
  writeConditionsFrom,
  objectHeaders,
  parseRange,
  quoted,
} from "./attributes.js";
import { uploadBody } from "./body.js";
import {
  bucketOf,
  checkKey,
  h1,
  keyOf,
  requireWrite,
  sendEmpty,
  sendXml,
  type GatewayDeps,
  type S3Context,
} from "./context.js";
import { noSuchKey, S3Error } from "./errors.js";
import * as repo from "./repo.js";
import { isoDate } from "./xml.js";

/** Removes blobs no row names any more, after the commit that let go of them; the sweep catches a failure. */
export function dropBlobs(deps: GatewayDeps, blobs: string[]): void {
  if (!blobs.length) return;
  deps.store
    .remove(blobs)
    .catch((err) => deps.log.warn({ err, blobs }, "removing replaced blobs failed; the sweep retries"));
}

/**
 * Commits a new object row over whatever the key holds (one round trip: repo.putObject), checking the write
 * conditions there. On failure the new blobs are removed; on success the replaced object's blobs are.
 */
export async function commitObject(ctx: S3Context, o: repo.NewObject, cond: repo.WriteConditions): Promise<Date> {
  let result: Awaited<ReturnType<typeof repo.putObject>>;
  try {
    result = await repo.putObject(ctx.deps.db, o, cond);
  } catch (err) {
    dropBlobs(ctx.deps, o.blobs);
    throw err;
  }
  if (result.outcome !== "ok") {
    dropBlobs(ctx.deps, o.blobs);
    if (result.outcome === "bucket_gone") throw new repo.BucketGone();
    if (result.outcome === "no_such_key") throw noSuchKey(o.key);
    throw new S3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.", {
      Condition: cond.ifNoneMatch ? "If-None-Match" : "If-Match",
    });
  }
  dropBlobs(
    ctx.deps,
    result.replaced.filter((b) => !o.blobs.includes(b)),
  );
  return result.modified;
}

/** Headers answering the checksums the client sent or asked for. */
const checksumHeaders = (checksums: Record<string, string>) =>
  Object.fromEntries(Object.entries(checksums).map(([a, v]) => [`x-amz-checksum-${a}`, v]));

export async function putObject(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  const bucket = bucketOf(ctx);
  const key = keyOf(ctx);
  checkKey(key);
  const attrs = attributesFrom(ctx.req.headers);
  const cond = writeConditionsFrom(ctx.req.headers);
  if (cond.ifNoneMatch || cond.ifMatch) checkWriteConditions(await repo.getObject(ctx.deps.db, bucket.id, key), cond); // early; again at commit
  const body = uploadBody(ctx, { maxBytes: ctx.deps.config.maxObjectBytes });
  const blob = randomUUID();
  await ctx.deps.store.write(blob, body.stream, { size: body.size, beforePublish: () => body.finish() });
  const { md5, checksums } = await body.finish();
  await commitObject(
    ctx,
    {
      bucket_id: bucket.id,
      key,
      size: body.size,
      etag: md5,
      blobs: [blob],
      blob_sizes: [body.size],
      ...attrs,
      checksums,
    },
    cond,
  );
  sendEmpty(ctx, 200, { etag: quoted(md5), ...checksumHeaders(checksums) });
}

/**
 * reads up to this size (1 MiB objects included) are one buffer (storage readSmall: one pread and one socket
 * write), larger ones a stream
 */
const SMALL_READ_BYTES = 1024 * 1024 + 1;

/** The bytes [start, end] of an object made of blobs of the given sizes, blob by blob. */
async function* objectBytes(deps: GatewayDeps, o: repo.ObjectRow, start: number, end: number): AsyncGenerator<Buffer> {
  let offset = 0;
  for (const [i, blob] of o.blobs.entries()) {
    const size = o.blob_sizes[i];
    const from = Math.max(start, offset);
    const to = Math.min(end, offset + size - 1);
    if (from <= to) yield* await deps.store.read(blob, { start: from - offset, end: to - offset });
    offset += size;
    if (offset > end) break;
  }
}

export async function getObject(ctx: S3Context, head: boolean): Promise<void> {
  const bucket = bucketOf(ctx);
  const key = keyOf(ctx);
  let o = ctx.object !== undefined ? ctx.object : await repo.getObject(ctx.deps.db, bucket.id, key);
  for (let attempt = 0; ; attempt++) {
    if (!o) throw noSuchKey(key);
    checkConditions(o, ctx.req.headers);
    const headers = objectHeaders(o, ctx.query, false);
    const range = parseRange(h1(ctx, "range"), o.size);
    if (!range && h1(ctx, "x-amz-checksum-mode")?.toUpperCase() === "ENABLED")
      Object.assign(headers, objectHeaders(o, ctx.query, true));
    const start = range?.start ?? 0;
    const end = range?.end ?? o.size - 1;
    headers["content-length"] = Math.max(0, end - start + 1);
    if (range) headers["content-range"] = `bytes ${start}-${end}/${o.size}`;
    if (head || o.size === 0) {
      ctx.res.writeHead(range ? 206 : 200, headers);
      ctx.res.end();
      return;
    }
    let source: Readable | Buffer;
    try {
      // a single blob is opened before the answer starts, so a missing one can still be answered
      const store = ctx.deps.store;
      source =
        o.blobs.length === 1 && store.readSmall && end - start < SMALL_READ_BYTES
          ? await store.readSmall(o.blobs[0], { start, end })
          : o.blobs.length === 1
            ? await store.read(o.blobs[0], { start, end })
            : Readable.from(objectBytes(ctx.deps, o, start, end));
    } catch (err) {
      // replaced or deleted since the row was read: read the row again, once
      if ((err as { code?: string }).code !== "ENOENT" || attempt > 0) throw err;
      o = await repo.getObject(ctx.deps.db, bucket.id, key);
      continue;
    }
    ctx.res.writeHead(range ? 206 : 200, headers);
    if (Buffer.isBuffer(source)) {
      if (source.length !== end - start + 1) throw new Error("blob shorter than its object row says");
      ctx.res.end(source);
    } else await pipeline(source, ctx.res);
    return;
  }
}

export async function deleteObject(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  const bucket = bucketOf(ctx);
  const blobs = await deleteKey(ctx.deps, bucket.id, keyOf(ctx));
  dropBlobs(ctx.deps, blobs);
  sendEmpty(ctx, 204);
}

/** Deletes one key; returns the blobs to remove (none when there was no such key). */
export async function deleteKey(deps: GatewayDeps, bucketId: string, key: string): Promise<string[]> {
  return repo.deleteObject(deps.db, bucketId, key);
}

/** x-amz-copy-source: "/bucket/key" or "bucket/key", URL-encoded, maybe with ?versionId. */
function copySource(value: string): { bucket: string; key: string } {
  let v = value;
  const q = v.indexOf("?");
  if (q >= 0) {
    const version = new URLSearchParams(v.slice(q + 1)).get("versionId");
    if (version !== null && version !== "null") throw new S3Error("NotImplemented", "Buckets are not versioned.");
    v = v.slice(0, q);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(v);
  } catch {
    throw new S3Error("InvalidArgument", "x-amz-copy-source is not valid URL encoding.");
  }
  if (decoded.startsWith("/")) decoded = decoded.slice(1);
  const slash = decoded.indexOf("/");
  if (slash <= 0 || slash === decoded.length - 1)
    throw new S3Error("InvalidArgument", "x-amz-copy-source must be bucket/key.");
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1) };
}

export async function copyObject(
  ctx: S3Context,
  resolveSource: (bucketName: string) => Promise<repo.BucketRef>,
): Promise<void> {
  requireWrite(ctx);
  const bucket = bucketOf(ctx);
  const key = keyOf(ctx);
  checkKey(key);
  const src = copySource(h1(ctx, "x-amz-copy-source")!);
  const srcBucket = await resolveSource(src.bucket);
  const source = await repo.getObject(ctx.deps.db, srcBucket.id, src.key);
  if (!source) throw noSuchKey(src.key);
  checkConditions(source, ctx.req.headers, "x-amz-copy-source-");
  const directive = (h1(ctx, "x-amz-metadata-directive") ?? "COPY").toUpperCase();
  if (directive !== "COPY" && directive !== "REPLACE")
    throw new S3Error("InvalidArgument", "x-amz-metadata-directive must be COPY or REPLACE.");
  if (directive === "COPY" && srcBucket.id === bucket.id && src.key === key)
    throw new S3Error(
      "InvalidRequest",
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata.",
    );
  const attrs = directive === "REPLACE" ? attributesFrom(ctx.req.headers) : source;
  const blobs = source.blobs.map(() => randomUUID());
  try {
    for (const [i, from] of source.blobs.entries()) await ctx.deps.store.copy(from, blobs[i]);
  } catch (err) {
    dropBlobs(ctx.deps, blobs);
    if ((err as { code?: string }).code === "ENOENT") throw noSuchKey(src.key); // deleted while copying
    throw err;
  }
  const at = await commitObject(
    ctx,
    {
      bucket_id: bucket.id,
      key,
      size: source.size,
      etag: source.etag,
      blobs,
      blob_sizes: source.blob_sizes,
      content_type: attrs.content_type,
      headers: attrs.headers,
      metadata: attrs.metadata,
      checksums: source.checksums,
    },
    { ifNoneMatch: false, ifMatch: null },
  );
  const sums = Object.fromEntries(Object.entries(source.checksums).map(([a, v]) => [`Checksum${a.toUpperCase()}`, v]));
  sendXml(ctx, 200, "CopyObjectResult", { ETag: quoted(source.etag), LastModified: isoDate(at), ...sums });
}
