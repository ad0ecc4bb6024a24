import { randomBytes } from "node:crypto";
import { S3Client } from "@aws-sdk/client-s3";
import { Hash } from "@smithy/hash-node";
import { SignatureV4 } from "@smithy/signature-v4";
import type { FastifyInstance } from "fastify";
import { call, createTestApp, type TestApp, type TestAppOptions } from "../helpers/app.js";
import type { BucketsState } from "../../src/buckets/module.js";

/** A platform with the S3 gateway listening on a free port. */
export async function bucketsApp(opts: TestAppOptions = {}): Promise<TestApp & { s3: BucketsState; endpoint: string }> {
  const t = await createTestApp({ startJobs: true, ...opts, env: { S3_PORT: "0", ...opts.env } });
  const s3 = t.platform.state<BucketsState>("buckets");
  if (!s3.gateway.address) throw new Error("the S3 gateway did not start");
  return { ...t, s3, endpoint: s3.endpoint() };
}

export const uniqueName = (prefix = "b") => `${prefix}-${randomBytes(5).toString("hex")}`;

export async function createBucket(
  app: FastifyInstance,
  token: string,
  name = uniqueName(),
): Promise<{ id: string; name: string }> {
  const res = await call(app, { method: "POST", url: "/v1/buckets", token, body: { name } });
  if (res.statusCode !== 201) throw new Error(`bucket create failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export interface IssuedKey {
  id: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export async function createKey(
  app: FastifyInstance,
  token: string,
  body: { permission: "read" | "read_write"; bucket_ids?: string[]; name?: string },
): Promise<IssuedKey> {
  const res = await call(app, { method: "POST", url: "/v1/buckets/keys", token, body: { name: "test", ...body } });
  if (res.statusCode !== 201) throw new Error(`key create failed: ${res.statusCode} ${res.body}`);
  const k = res.json();
  return { id: k.id, accessKeyId: k.access_key_id, secretAccessKey: k.secret_access_key };
}

export function s3Client(endpoint: string, key: { accessKeyId: string; secretAccessKey: string }): S3Client {
  return new S3Client({
    endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    maxAttempts: 1,
  });
}

/** What an SDK call rejected with: the S3 error code (err.name) and HTTP status. */
export async function s3Error(p: Promise<unknown>): Promise<{ code: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    const e = err as { name: string; Code?: string; $metadata?: { httpStatusCode?: number } };
    return { code: e.Code ?? e.name, status: e.$metadata?.httpStatusCode };
  }
  throw new Error("expected the call to fail");
}

/** Signs a request with the AWS signer as a client would (path style; host is host:port). */
export async function signRequest(
  key: { accessKeyId: string; secretAccessKey: string },
  r: { method: string; host: string; path: string; headers?: Record<string, string>; payloadHash?: string },
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: "s3",
    region: "us-east-1",
    credentials: key,
    sha256: Hash.bind(null, "sha256"),
    uriEscapePath: false,
  });
  const signed = await signer.sign({
    method: r.method,
    protocol: "http:",
    hostname: r.host,
    path: r.path,
    query: {},
    headers: { host: r.host, "x-amz-content-sha256": r.payloadHash ?? "UNSIGNED-PAYLOAD", ...r.headers },
  });
  return signed.headers;
}
