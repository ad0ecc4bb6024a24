/**
 * Multipart uploads: create, upload part, complete, abort, list parts (and list uploads, which clients use to
 * resume). Each part is a blob of its own; completing makes the object the ordered list of its parts' blobs,
 * so nothing is copied. Parts other than the last must be at least 5 MiB, as on S3.
 */
import { createHash, randomUUID } from "node:crypto";
import { inTransaction } from "../../store/db.js";
import { attributesFrom, checkWriteConditions, quoted, writeConditionsFrom } from "./attributes.js";
import { readSmallBody, uploadBody } from "./body.js";
import { checksumAlgorithm, compositeChecksum, type ChecksumAlgorithm } from "./checksums.js";
import { bucketOf, checkKey, h1, keyOf, q1, requireWrite, sendEmpty, sendXml, type S3Context } from "./context.js";
import { S3Error } from "./errors.js";
import { dropBlobs } from "./objects.js";
import * as repo from "./repo.js";
import { isoDate, parseXml } from "./xml.js";

export const MIN_PART_BYTES = 5 * 1024 * 1024;

const noSuchUpload = (id: string) =>
  new S3Error(
    "NoSuchUpload",
    "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
    {
      UploadId: id,
    },
  );

async function upload(
  ctx: S3Context,
  lock = false,
  q: Parameters<typeof repo.getUpload>[0] = ctx.deps.db,
): Promise<repo.UploadRow> {
  const id = q1(ctx, "uploadId") ?? "";
  const found = /^[0-9a-f-]{36}$/.test(id) ? await repo.getUpload(q, bucketOf(ctx).id, keyOf(ctx), id, lock) : null;
  if (!found) throw noSuchUpload(id);
  return found;
}

export async function createUpload(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  const bucket = bucketOf(ctx);
  const key = keyOf(ctx);
  checkKey(key);
  const algorithm = h1(ctx, "x-amz-checksum-algorithm");
  const id = randomUUID();
  await repo.createUpload(ctx.deps.db, {
    id,
    bucket_id: bucket.id,
    key,
    ...attributesFrom(ctx.req.headers),
    checksum_algorithm: algorithm ? checksumAlgorithm(algorithm) : null,
  });
  sendXml(ctx, 200, "InitiateMultipartUploadResult", { Bucket: bucket.name, Key: key, UploadId: id });
}

function partNumberOf(ctx: S3Context): number {
  const n = Number(q1(ctx, "partNumber"));
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new S3Error("InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive.");
  return n;
}

export async function uploadPart(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  if (h1(ctx, "x-amz-copy-source") !== undefined)
    throw new S3Error("NotImplemented", "UploadPartCopy is not supported.");
  const partNumber = partNumberOf(ctx);
  const up = await upload(ctx);
  const extra = up.checksum_algorithm ? [up.checksum_algorithm as ChecksumAlgorithm] : [];
  const body = uploadBody(ctx, { maxBytes: ctx.deps.config.maxObjectBytes, extraAlgorithms: extra });
  const blob = randomUUID();
  await ctx.deps.store.write(blob, body.stream, { size: body.size, beforePublish: () => body.finish() });
  const { md5, checksums } = await body.finish();
  let replaced: string | null;
  try {
    replaced = await inTransaction(ctx.deps.db, async (tx) => {
      await upload(ctx, true, tx); // still there (not completed or aborted meanwhile)
      return repo.putPart(tx, {
        upload_id: up.id,
        bucket_id: up.bucket_id,
        part_number: partNumber,
        blob,
        size: body.size,
        etag: md5,
        checksums,
      });
    });
  } catch (err) {
    dropBlobs(ctx.deps, [blob]);
    throw err;
  }
  if (replaced) dropBlobs(ctx.deps, [replaced]);
  const sums = Object.fromEntries(Object.entries(checksums).map(([a, v]) => [`x-amz-checksum-${a}`, v]));
  sendEmpty(ctx, 200, { etag: quoted(md5), ...sums });
}

interface RequestedPart {
  number: number;
  etag: string;
  checksums: Record<string, string>;
}

function requestedParts(xml: string): RequestedPart[] {
  const doc = parseXml(xml, "CompleteMultipartUpload");
  const parts = (doc.Part ?? []) as Record<string, unknown>[];
  if (!parts.length) throw new S3Error("MalformedXML", "The XML you provided has no Part element.");
  return parts.map((p) => {
    const number = Number(p.PartNumber);
    if (!Number.isInteger(number)) throw new S3Error("MalformedXML", "A Part has no valid PartNumber.");
    const checksums: Record<string, string> = {};
    for (const a of ["crc32", "crc32c", "sha1", "sha256"]) {
      const v = p[`Checksum${a.toUpperCase()}`];
      if (typeof v === "string") checksums[a] = v.trim();
    }
    return {
      number,
      etag: String(p.ETag ?? "")
        .trim()
        .replace(/^"|"$/g, ""),
      checksums,
    };
  });
}

export async function completeUpload(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  const bucket = bucketOf(ctx);
  const key = keyOf(ctx);
  const wanted = requestedParts(await readSmallBody(ctx));
  for (let i = 1; i < wanted.length; i++)
    if (wanted[i].number <= wanted[i - 1].number)
      throw new S3Error(
        "InvalidPartOrder",
        "The list of parts was not in ascending order. Parts must be ordered by part number.",
      );
  let unused: string[] = [];
  let replaced: string[] = [];
  const result = await inTransaction(ctx.deps.db, async (tx) => {
    const up = await upload(ctx, true, tx);
    const stored = new Map((await repo.listParts(tx, up.id)).map((p) => [p.part_number, p]));
    const chosen = wanted.map((w, i) => {
      const p = stored.get(w.number);
      const invalid = () =>
        new S3Error(
          "InvalidPart",
          "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
          {
            PartNumber: String(w.number),
          },
        );
      if (!p || p.etag !== w.etag) throw invalid();
      for (const [a, v] of Object.entries(w.checksums)) if (p.checksums[a] !== v) throw invalid();
      if (i < wanted.length - 1 && p.size < MIN_PART_BYTES)
        throw new S3Error("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.", {
          PartNumber: String(w.number),
        });
      return p;
    });
    const md5 = createHash("md5");
    for (const p of chosen) md5.update(Buffer.from(p.etag, "hex"));
    const etag = `${md5.digest("hex")}-${chosen.length}`;
    const checksums: Record<string, string> = {};
    const algorithm = (up.checksum_algorithm as ChecksumAlgorithm | null) ?? null;
    if (algorithm && chosen.every((p) => p.checksums[algorithm]))
      checksums[algorithm] = compositeChecksum(
        algorithm,
        chosen.map((p) => p.checksums[algorithm]),
      );
    const current = await repo.getObject(tx, bucket.id, key, true);
    checkWriteConditions(current, writeConditionsFrom(ctx.req.headers));
    const blobs = chosen.map((p) => p.blob);
    await repo.putObjectRow(
      tx,
      {
        bucket_id: bucket.id,
        key,
        size: chosen.reduce((n, p) => n + p.size, 0),
        etag,
        blobs,
        blob_sizes: chosen.map((p) => p.size),
        content_type: up.content_type,
        headers: up.headers,
        metadata: up.metadata,
        checksums,
      },
      current,
    );
    await repo.deleteUpload(tx, up.id);
    unused = [...stored.values()].map((p) => p.blob).filter((b) => !blobs.includes(b));
    replaced = current?.blobs ?? [];
    return { etag, checksums };
  });
  dropBlobs(ctx.deps, [...unused, ...replaced]);
  const sums = Object.fromEntries(Object.entries(result.checksums).map(([a, v]) => [`Checksum${a.toUpperCase()}`, v]));
  sendXml(ctx, 200, "CompleteMultipartUploadResult", {
    Location: `/${bucket.name}/${encodeURIComponent(key)}`,
    Bucket: bucket.name,
    Key: key,
    ETag: quoted(result.etag),
    ...sums,
  });
}

export async function abortUpload(ctx: S3Context): Promise<void> {
  requireWrite(ctx);
  const blobs = await inTransaction(ctx.deps.db, async (tx) => {
    const up = await upload(ctx, true, tx);
    const parts = await repo.listParts(tx, up.id);
    await repo.deleteUpload(tx, up.id);
    return parts.map((p) => p.blob);
  });
  dropBlobs(ctx.deps, blobs);
  sendEmpty(ctx, 204);
}

export async function listParts(ctx: S3Context): Promise<void> {
  const bucket = bucketOf(ctx);
  const up = await upload(ctx);
  const marker = Number(q1(ctx, "part-number-marker") ?? 0) || 0;
  const max = Math.min(Math.max(Number(q1(ctx, "max-parts") ?? 1000) || 1000, 1), 1000);
  const parts = await repo.listParts(ctx.deps.db, up.id, marker, max + 1);
  const shown = parts.slice(0, max);
  sendXml(ctx, 200, "ListPartsResult", {
    Bucket: bucket.name,
    Key: up.key,
    UploadId: up.id,
    PartNumberMarker: marker,
    NextPartNumberMarker: shown.length ? shown[shown.length - 1].part_number : marker,
    MaxParts: max,
    IsTruncated: parts.length > max,
    ...(up.checksum_algorithm ? { ChecksumAlgorithm: up.checksum_algorithm.toUpperCase() } : {}),
    Part: shown.map((p) => ({
      PartNumber: p.part_number,
      LastModified: isoDate(p.last_modified),
      ETag: quoted(p.etag),
      Size: p.size,
      ...Object.fromEntries(Object.entries(p.checksums).map(([a, v]) => [`Checksum${a.toUpperCase()}`, v])),
    })),
  });
}

export async function listUploads(ctx: S3Context): Promise<void> {
  const bucket = bucketOf(ctx);
  const prefix = q1(ctx, "prefix") ?? "";
  const max = Math.min(Math.max(Number(q1(ctx, "max-uploads") ?? 1000) || 1000, 1), 1000);
  const uploads = await repo.listUploads(ctx.deps.db, bucket.id, prefix, max + 1);
  sendXml(ctx, 200, "ListMultipartUploadsResult", {
    Bucket: bucket.name,
    KeyMarker: "",
    UploadIdMarker: "",
    Prefix: prefix,
    MaxUploads: max,
    IsTruncated: uploads.length > max,
    Upload: uploads
      .slice(0, max)
      .map((u) => ({ Key: u.key, UploadId: u.id, Initiated: isoDate(u.created_at), StorageClass: "STANDARD" })),
  });
}
