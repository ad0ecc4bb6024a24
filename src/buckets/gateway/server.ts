/**
 * The S3 gateway: its own HTTP listener (S3_HOST:S3_PORT). Each request is addressed (virtual-host style
 * `<bucket>.<S3_DOMAIN>` or path style `/<bucket>/<key>`), authenticated (Signature V4 in the header or a
 * presigned URL; the key read from the store on every request, so a revoked key is refused at once), authorised
 * (the key's owner owns the bucket, the key covers it, a read key only reads) and dispatched. Errors are S3's XML.
 */
import { randomBytes } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { S3Error, accessDenied, noSuchBucket } from "./errors.js";
import { errorDocument } from "./xml.js";
import { DigestPool } from "./digest-pool.js";
import { parseSignature, verifySignature } from "./sigv4.js";
import * as repo from "./repo.js";
import type { GatewayDeps, S3Context } from "./context.js";
import { copyObject, deleteObject, getObject, putObject } from "./objects.js";
import { abortUpload, completeUpload, createUpload, listParts, listUploads, uploadPart } from "./multipart.js";
import { bucketLocation, deleteObjects, headBucket, listBuckets, listObjects } from "./list.js";

/** Query parameters as the client signed them: decoded, `+` kept (S3 clients encode spaces as %20). */
export function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const part of raw.split("&")) {
    if (!part) continue;
    const i = part.indexOf("=");
    const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
    const v = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Bucket and key of a request: virtual-host style when the host is <bucket>.<domain>, else path style. */
export function address(
  host: string | undefined,
  rawPath: string,
  domain: string,
): { bucket: string | null; key: string | null } {
  const hostname = (host ?? "").replace(/:\d+$/, "").toLowerCase();
  const path = decodeURIComponent(rawPath);
  if (hostname.endsWith(`.${domain}`)) {
    const bucket = hostname.slice(0, -domain.length - 1);
    const key = path.slice(1);
    return { bucket, key: key === "" ? null : key };
  }
  const rest = path.slice(1);
  if (rest === "") return { bucket: null, key: null };
  const slash = rest.indexOf("/");
  if (slash < 0) return { bucket: rest, key: null };
  const key = rest.slice(slash + 1);
  return { bucket: rest.slice(0, slash), key: key === "" ? null : key };
}

const has = (ctx: S3Context, name: string) => ctx.query[name] !== undefined;

/** Sub-resources of S3 this gateway does not offer (ACLs, tagging, versioning, ...): NotImplemented, never misread. */
const UNSUPPORTED = [
  "acl",
  "tagging",
  "versioning",
  "versions",
  "versionId",
  "policy",
  "cors",
  "lifecycle",
  "website",
  "logging",
  "notification",
  "replication",
  "encryption",
  "retention",
  "legal-hold",
  "object-lock",
  "torrent",
  "restore",
  "select",
  "attributes",
  "accelerate",
  "analytics",
  "inventory",
  "metrics",
  "ownershipControls",
  "publicAccessBlock",
  "requestPayment",
  "intelligent-tiering",
  "partNumber",
];

async function dispatch(ctx: S3Context, resolveSource: (name: string) => Promise<repo.BucketRef>): Promise<void> {
  const m = ctx.method;
  const unsupported = UNSUPPORTED.find((name) => has(ctx, name) && !(name === "partNumber" && has(ctx, "uploadId")));
  if (unsupported)
    throw new S3Error("NotImplemented", `The ${unsupported} sub-resource is not implemented by this gateway.`);
  if (ctx.bucketName === null) {
    if (m === "GET") return listBuckets(ctx);
    throw new S3Error("MethodNotAllowed", "The specified method is not allowed against this resource.");
  }
  if (ctx.key === null) {
    if (m === "HEAD") return headBucket(ctx);
    if (m === "GET" && has(ctx, "location")) return bucketLocation(ctx);
    if (m === "GET" && has(ctx, "uploads")) return listUploads(ctx);
    if (m === "GET" && ctx.query["list-type"] === "2") return listObjects(ctx, true);
    if (
      m === "GET" &&
      Object.keys(ctx.query).every(
        (k) =>
          ["prefix", "delimiter", "marker", "max-keys", "encoding-type", "x-id"].includes(k) || k.startsWith("X-Amz-"),
      )
    )
      return listObjects(ctx, false);
    if (m === "POST" && has(ctx, "delete")) return deleteObjects(ctx);
    if (m === "PUT")
      throw new S3Error(
        "BucketAlreadyOwnedByYou",
        "Your previous request to create the named bucket succeeded and you already own it.",
      );
    if (m === "DELETE") throw accessDenied("Buckets are deleted through the platform API (DELETE /v1/buckets/{id}).");
    throw new S3Error(
      "NotImplemented",
      "A header or query you provided implies functionality that is not implemented.",
    );
  }
  if (m === "PUT" && has(ctx, "uploadId")) return uploadPart(ctx);
  if (m === "PUT" && ctx.req.headers["x-amz-copy-source"] !== undefined) return copyObject(ctx, resolveSource);
  if (m === "PUT") return putObject(ctx);
  if (m === "POST" && has(ctx, "uploads")) return createUpload(ctx);
  if (m === "POST" && has(ctx, "uploadId")) return completeUpload(ctx);
  if (m === "DELETE" && has(ctx, "uploadId")) return abortUpload(ctx);
  if (m === "DELETE") return deleteObject(ctx);
  if (m === "GET" && has(ctx, "uploadId")) return listParts(ctx);
  if (m === "GET") return getObject(ctx, false);
  if (m === "HEAD") return getObject(ctx, true);
  throw new S3Error("NotImplemented", "A header or query you provided implies functionality that is not implemented.");
}

/** Whether the key may use the bucket: same owner, and the key names it (or covers all of the owner's buckets). */
const covers = (key: repo.KeyRow, b: repo.BucketRef) =>
  key.owner_kind === b.owner_kind &&
  key.owner_id === b.owner_id &&
  (key.bucket_ids === null || key.bucket_ids.includes(b.id));

/** last_used_at of keys, written at most once a minute per key and process */
const touched = new Map<string, number>();
function touch(deps: GatewayDeps, keyId: string): void {
  const now = Date.now();
  if ((touched.get(keyId) ?? 0) > now - 60_000) return;
  if (touched.size > 10_000) touched.clear();
  touched.set(keyId, now);
  repo.touchKey(deps.db, keyId).catch(() => {});
}

/**
 * Opened key secrets by their sealed text: one AES-GCM open per key and process instead of one per request. Keyed
 * by the ciphertext, so nothing here outlives the row: the key row itself (revocation) is still read every request.
 */
const openedSecrets = new Map<string, string>();
function openSecret(deps: GatewayDeps, sealed: string): string {
  let secret = openedSecrets.get(sealed);
  if (secret === undefined) {
    secret = deps.secrets.open(sealed, "bucket_keys.secret_sealed");
    if (openedSecrets.size >= 10_000) openedSecrets.clear();
    openedSecrets.set(sealed, secret);
  }
  return secret;
}

async function authenticate(
  deps: GatewayDeps,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): Promise<S3Context> {
  const url = req.url ?? "/";
  const qi = url.indexOf("?");
  const rawPath = qi < 0 ? url : url.slice(0, qi);
  let query: Record<string, string | string[]>;
  let addressed: { bucket: string | null; key: string | null };
  try {
    query = parseQuery(qi < 0 ? "" : url.slice(qi + 1));
    addressed = address(req.headers.host, rawPath, deps.config.domain);
  } catch {
    throw new S3Error("InvalidRequest", "The request address is not valid URL encoding.");
  }
  const method = req.method ?? "GET";
  const incoming = { method, rawPath, query, headers: req.headers };
  const claim = parseSignature(incoming);
  if (!claim) throw accessDenied("Anonymous access is not allowed; sign requests with a bucket access key.");
  const reads = (method === "GET" || method === "HEAD") && addressed.key !== null && !query.uploadId;
  const { key, bucket, object } = await repo.keyAndBucket(
    deps.db,
    claim.accessKeyId,
    addressed.bucket,
    reads ? addressed.key : null,
  );
  if (!key || key.revoked_at)
    throw new S3Error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.");
  const signing = await verifySignature(incoming, claim, openSecret(deps, key.secret_sealed));
  touch(deps, key.id);
  if (addressed.bucket !== null) {
    if (!bucket) throw noSuchBucket(addressed.bucket);
    if (!covers(key, bucket)) throw accessDenied();
    deps.count(bucket.id);
  }
  return {
    deps,
    req,
    res,
    requestId,
    method,
    query,
    bucketName: addressed.bucket,
    key: addressed.key,
    auth: { key, bucket, signing, payloadHash: claim.payloadHash },
    ...(reads ? { object } : {}),
  };
}

function sendError(
  deps: GatewayDeps,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  err: unknown,
): void {
  const e =
    err instanceof S3Error
      ? err
      : err instanceof repo.BucketGone
        ? new S3Error("NoSuchBucket", "The specified bucket does not exist.")
        : new S3Error("InternalError", "We encountered an internal error. Please try again.");
  if (!(err instanceof S3Error) && !(err instanceof repo.BucketGone))
    deps.log.error({ err, requestId }, "S3 gateway request failed");
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // the client may still be sending a body this answer refuses: close rather than read it
  const body = req.method === "HEAD" || e.status === 304 ? "" : errorDocument(e.code, e.message, e.detail, requestId);
  res.writeHead(e.status, {
    "content-type": "application/xml",
    "content-length": Buffer.byteLength(body),
    ...(req.complete ? {} : { connection: "close" }),
  });
  res.end(body);
}

/**
 * Request ids: a random per-process prefix and a counter. Unique like random ones (S3 only needs them distinct, for
 * support), without a call into the CSPRNG for every request (about 10 µs each, measured by bench:buckets).
 */
const requestIdPrefix = randomBytes(5).toString("hex").toUpperCase();
let requestCounter = 0;
const nextRequestId = () =>
  `${requestIdPrefix}${(requestCounter++ % 0xffffff).toString(16).toUpperCase().padStart(6, "0")}`;

/** One request; `expectContinue`: the client waits for 100 Continue, sent once the request is authenticated. */
export async function handleS3(
  deps: GatewayDeps,
  req: IncomingMessage,
  res: ServerResponse,
  expectContinue = false,
): Promise<void> {
  const requestId = nextRequestId();
  res.setHeader("x-amz-request-id", requestId);
  res.setHeader("server", "platform-s3");
  try {
    const ctx = await authenticate(deps, req, res, requestId);
    if (expectContinue) res.writeContinue();
    const resolveSource = async (name: string) => {
      const { bucket } = await repo.keyAndBucket(deps.db, ctx.auth.key.access_key_id, name);
      if (!bucket) throw noSuchBucket(name);
      if (!covers(ctx.auth.key, bucket)) throw accessDenied();
      return bucket;
    };
    await dispatch(ctx, resolveSource);
  } catch (err) {
    sendError(deps, req, res, requestId, err);
  }
}

/** The gateway's listener; `address` once listening. */
export class S3Gateway {
  private server: http.Server | null = null;

  constructor(private readonly deps: GatewayDeps) {}

  async start(host: string, port: number): Promise<AddressInfo> {
    if (this.deps.config.digestWorkers > 0) this.deps.digests ??= new DigestPool(this.deps.config.digestWorkers);
    const server = http.createServer({ requestTimeout: 0, keepAliveTimeout: 65_000 }, (req, res) => {
      void handleS3(this.deps, req, res);
    });
    // a refused upload is answered before its body is sent
    server.on("checkContinue", (req, res) => void handleS3(this.deps, req, res, true));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
    return server.address() as AddressInfo;
  }

  get address(): AddressInfo | null {
    return (this.server?.address() as AddressInfo | null) ?? null;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeIdleConnections();
    // uploads in flight get two seconds; what is cut off leaves no object (storage writes publish only when whole)
    const cut = setTimeout(() => server.closeAllConnections(), 2000);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(cut);
    await this.deps.digests?.close();
    this.deps.digests = null;
  }
}
