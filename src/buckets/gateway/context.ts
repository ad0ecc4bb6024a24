/** What every S3 operation gets: the request as addressed and authenticated, and the gateway's parts. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../../store/db.js";
import type { SecretBox } from "../../kernel/secrets.js";
import type { BucketsConfig } from "../config.js";
import type { BlobStore } from "../storage/types.js";
import type { BucketRef, KeyRow, ObjectRow } from "./repo.js";
import type { SigningContext } from "./sigv4.js";
import { S3Error } from "./errors.js";
import type { DigestPool } from "./digest-pool.js";
import { xmlDocument } from "./xml.js";

export interface GatewayDeps {
  db: Db;
  secrets: SecretBox;
  store: BlobStore;
  config: BucketsConfig;
  log: FastifyBaseLogger;
  /** worker threads hashing large uploads; null: everything is hashed inline */
  digests: DigestPool | null;
  /** counts one request against a bucket (flushed to the store every few seconds) */
  count(bucketId: string): void;
}

export interface S3Context {
  deps: GatewayDeps;
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  method: string;
  query: Record<string, string | string[]>;
  /** bucket name from the host (virtual-host style) or the first path segment; null: the service itself */
  bucketName: string | null;
  /** object key, decoded; null: the bucket itself */
  key: string | null;
  auth: {
    key: KeyRow;
    /** the named bucket when it exists and this key may use it */
    bucket: BucketRef | null;
    signing: SigningContext;
    payloadHash: string;
  };
  /** GET and HEAD: the object as read with the key (null: no such key); undefined for other requests */
  object?: ObjectRow | null;
}

export const q1 = (ctx: S3Context, name: string): string | undefined => {
  const v = ctx.query[name];
  return Array.isArray(v) ? v[0] : v;
};

export const h1 = (ctx: S3Context, name: string): string | undefined => {
  const v = ctx.req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The bucket of a bucket or object operation (the dispatcher checked it exists and is the key's). */
export function bucketOf(ctx: S3Context): BucketRef {
  if (!ctx.auth.bucket) throw new Error("bucketOf: no bucket on this request");
  return ctx.auth.bucket;
}

export function keyOf(ctx: S3Context): string {
  if (ctx.key === null) throw new Error("keyOf: no key on this request");
  return ctx.key;
}

export function requireWrite(ctx: S3Context): void {
  if (ctx.auth.key.permission !== "read_write") throw new S3Error("AccessDenied", "This access key may only read.");
}

export function sendXml(ctx: S3Context, status: number, root: string, body: Record<string, unknown>): void {
  const text = xmlDocument(root, body);
  ctx.res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(text) });
  ctx.res.end(text);
}

export function sendEmpty(ctx: S3Context, status: number, headers: Record<string, string | number> = {}): void {
  ctx.res.writeHead(status, { ...headers, "content-length": 0 });
  ctx.res.end();
}

/** Object keys: 1-1024 bytes of UTF-8. */
export function checkKey(key: string): void {
  if (key.length === 0) throw new S3Error("InvalidArgument", "An object key must not be empty.");
  if (Buffer.byteLength(key) > 1024) throw new S3Error("KeyTooLongError", "Your key is too long.");
}
