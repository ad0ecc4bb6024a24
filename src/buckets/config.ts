import os from "node:os";
import path from "node:path";
import { ConfigError, httpUrl, int } from "../config/config.js";

type Env = Record<string, string | undefined>;

/** Where the s3 storage backend keeps the bytes: an external S3-compatible service with the operator's credentials. */
export interface UpstreamConfig {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** blobs are stored under this key prefix ("" or ending in "/") */
  prefix: string;
}

/** The buckets area's settings (README: src/buckets/README.md). */
export interface BucketsConfig {
  /** S3_HOST / S3_PORT: the gateway's listener (0: a free port) */
  host: string;
  port: number;
  /** S3_PUBLIC_URL: the endpoint buckets show; null: http://<host>:<listening port> */
  publicUrl: string | null;
  region: string;
  /** S3_DOMAIN: virtual-host-style addressing answers <bucket>.<domain>; default s3.<BASE_DOMAIN> */
  domain: string;
  storage: "filesystem" | "s3";
  /** S3_STORAGE_DIR: the filesystem backend's directory (default $DATA_DIR/buckets) */
  storageDir: string;
  upstream: UpstreamConfig | null;
  /** S3_ORPHAN_GRACE_SECONDS: a blob no row names is removed once this old (an upload may still be committing it) */
  orphanGraceSeconds: number;
  /** S3_MAX_OBJECT_BYTES: the largest single PUT or part (S3: 5 GiB) */
  maxObjectBytes: number;
  /** S3_UPLOAD_EXPIRY_DAYS: multipart uploads neither completed nor aborted are aborted this old (0: never) */
  uploadExpiryDays: number;
  /**
   * S3_DIGEST_WORKERS: threads hashing uploads of 1 MiB and more beside the request's own thread; 0: inline.
   * Default: half the cores from 4 cores on, 0 below (measured on 2 cores: the copies to a worker cost more than
   * the overlap gains when no core is spare).
   */
  digestWorkers: number;
}

function upstreamConfig(env: Env): UpstreamConfig {
  const need = (name: string) => {
    const v = env[name];
    if (!v) throw new ConfigError(name, "is required with S3_STORAGE=s3");
    return v;
  };
  const prefix = env.S3_UPSTREAM_PREFIX ?? "";
  return {
    endpoint: httpUrl(env, "S3_UPSTREAM_ENDPOINT") ?? need("S3_UPSTREAM_ENDPOINT"),
    bucket: need("S3_UPSTREAM_BUCKET"),
    region: env.S3_UPSTREAM_REGION || "us-east-1",
    accessKeyId: need("S3_UPSTREAM_ACCESS_KEY_ID"),
    secretAccessKey: need("S3_UPSTREAM_SECRET_ACCESS_KEY"),
    prefix: prefix === "" || prefix.endsWith("/") ? prefix : `${prefix}/`,
  };
}

export function bucketsConfig(env: Env): BucketsConfig {
  const storage = env.S3_STORAGE || "filesystem";
  if (storage !== "filesystem" && storage !== "s3")
    throw new ConfigError("S3_STORAGE", `must be filesystem or s3, got "${storage}"`);
  const region = env.S3_REGION || "us-east-1";
  if (!/^[a-z0-9-]{1,32}$/.test(region)) throw new ConfigError("S3_REGION", `is not a region name: "${region}"`);
  const domain = (env.S3_DOMAIN || `s3.${env.BASE_DOMAIN || "localhost"}`).toLowerCase();
  if (!/^[a-z0-9.-]+$/.test(domain)) throw new ConfigError("S3_DOMAIN", `is not a domain name: "${domain}"`);
  return {
    host: env.S3_HOST || "127.0.0.1",
    port: int(env, "S3_PORT", 9000, 0, 65535),
    publicUrl: httpUrl(env, "S3_PUBLIC_URL"),
    region,
    domain,
    storage,
    storageDir: path.resolve(env.S3_STORAGE_DIR || path.join(env.DATA_DIR || "./data", "buckets")),
    upstream: storage === "s3" ? upstreamConfig(env) : null,
    orphanGraceSeconds: int(env, "S3_ORPHAN_GRACE_SECONDS", 3600, 0, 30 * 86_400),
    maxObjectBytes: int(env, "S3_MAX_OBJECT_BYTES", 5 * 1024 ** 3, 1024, Number.MAX_SAFE_INTEGER),
    uploadExpiryDays: int(env, "S3_UPLOAD_EXPIRY_DAYS", 7, 0, 3650),
    digestWorkers: int(
      env,
      "S3_DIGEST_WORKERS",
      os.availableParallelism() >= 4 ? Math.floor(os.availableParallelism() / 2) : 0,
      0,
      64,
    ),
  };
}
