/**
 * AWS Signature Version 4, verified server-side with the signing library the AWS SDK itself uses
 * (@smithy/signature-v4): the canonical request comes from it; this file parses what the client sent
 * (Authorization header or presigned query), hands the library the request as the client signed it, hashes the
 * string to sign with node's crypto under a cached signing key, and compares the result in constant time. The chunk chain of streaming uploads
 * (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) signs each chunk with the library's string signer (chunked.ts).
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { Hash } from "@smithy/hash-node";
import {
  ALGORITHM_IDENTIFIER,
  createScope,
  getCanonicalHeaders,
  SignatureV4,
  UNSIGNED_PAYLOAD,
} from "@smithy/signature-v4";
import type { HeaderBag, HttpRequest } from "@smithy/types";
import { S3Error } from "./errors.js";

export const sha256Constructor = Hash.bind(null, "sha256");
export const EMPTY_SHA256 = createHash("sha256").update("").digest("hex");
/** how far a signed request's date may be from the server's clock (S3: 15 minutes) */
const MAX_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;

/** What the client claims before the key is looked up. */
export interface SignedRequestClaim {
  accessKeyId: string;
  /** 20130524T000000Z */
  longDate: string;
  shortDate: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  presigned: boolean;
  /** x-amz-content-sha256 (header auth), UNSIGNED-PAYLOAD for presigned URLs */
  payloadHash: string;
  expiresSeconds: number | null;
}

/** A verified request: what the chunk chain of a streaming upload continues from. */
export interface SigningContext {
  signer: SignatureV4;
  longDate: string;
  signingDate: Date;
  region: string;
  service: string;
  scope: string;
  seedSignature: string;
}

/** The incoming request as the gateway sees it (raw path, decoded query). */
export interface IncomingSigned {
  method: string;
  rawPath: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string | string[] | undefined>;
}

const header = (h: IncomingSigned["headers"], name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v.join(",") : v;
};
const q1 = (q: IncomingSigned["query"], name: string): string | undefined => {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * What a request signed either way claims: the credential's scope (`<key id>/<date>/<region>/<service>/aws4_request`),
 * its date, the headers it signed and the signature, with what the way it was signed (`form`) adds.
 */
function claimOf(
  credential: string,
  signed: { longDate: string; signedHeaders: string; signature: string },
  form: Pick<SignedRequestClaim, "presigned" | "payloadHash" | "expiresSeconds">,
): SignedRequestClaim {
  const parts = credential.split("/");
  if (parts.length !== 5 || parts[4] !== "aws4_request" || !/^\d{8}$/.test(parts[1]))
    throw new S3Error("AuthorizationHeaderMalformed", `The credential is malformed: "${credential}".`);
  return {
    accessKeyId: parts[0],
    shortDate: parts[1],
    region: parts[2],
    service: parts[3],
    longDate: signed.longDate,
    signedHeaders: signed.signedHeaders.split(";"),
    signature: signed.signature,
    ...form,
  };
}

/** The claim of a request signed in the Authorization header or by a presigned URL; null: anonymous. */
export function parseSignature(req: IncomingSigned): SignedRequestClaim | null {
  const auth = header(req.headers, "authorization");
  if (auth) {
    if (!auth.startsWith(`${ALGORITHM_IDENTIFIER} `)) {
      if (auth.startsWith("AWS "))
        throw new S3Error("InvalidRequest", "Signature version 2 is not supported; use AWS4-HMAC-SHA256.");
      throw new S3Error("AuthorizationHeaderMalformed", "The authorization header is malformed.");
    }
    const fields = new Map<string, string>();
    for (const part of auth.slice(ALGORITHM_IDENTIFIER.length + 1).split(",")) {
      const i = part.indexOf("=");
      if (i > 0) fields.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
    }
    const credential = fields.get("Credential");
    const signedHeaders = fields.get("SignedHeaders");
    const signature = fields.get("Signature");
    if (!credential || !signedHeaders || !signature)
      throw new S3Error(
        "AuthorizationHeaderMalformed",
        "The authorization header needs Credential, SignedHeaders and Signature.",
      );
    const longDate = header(req.headers, "x-amz-date") ?? dateHeaderAsLong(header(req.headers, "date"));
    const payloadHash = header(req.headers, "x-amz-content-sha256");
    if (!payloadHash)
      throw new S3Error("InvalidRequest", "Missing required header for this request: x-amz-content-sha256.");
    return claimOf(
      credential,
      { longDate, signedHeaders, signature },
      { presigned: false, payloadHash, expiresSeconds: null },
    );
  }
  const algorithm = q1(req.query, "X-Amz-Algorithm");
  if (algorithm === undefined) return null;
  if (algorithm !== ALGORITHM_IDENTIFIER)
    throw new S3Error("AuthorizationQueryParametersError", "X-Amz-Algorithm must be AWS4-HMAC-SHA256.");
  const credential = q1(req.query, "X-Amz-Credential");
  const longDate = q1(req.query, "X-Amz-Date");
  const expires = q1(req.query, "X-Amz-Expires");
  const signedHeaders = q1(req.query, "X-Amz-SignedHeaders");
  const signature = q1(req.query, "X-Amz-Signature");
  if (!credential || !longDate || !expires || !signedHeaders || !signature)
    throw new S3Error(
      "AuthorizationQueryParametersError",
      "Query-string authentication needs X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and X-Amz-Signature.",
    );
  const expiresSeconds = Number(expires);
  if (!Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGNED_SECONDS)
    throw new S3Error("AuthorizationQueryParametersError", "X-Amz-Expires must be between 1 and 604800 seconds.");
  const payloadHash = q1(req.query, "X-Amz-Content-Sha256") ?? UNSIGNED_PAYLOAD;
  return claimOf(credential, { longDate, signedHeaders, signature }, { presigned: true, payloadHash, expiresSeconds });
}

function dateHeaderAsLong(date: string | undefined): string {
  const d = date ? new Date(date) : null;
  if (!d || Number.isNaN(d.getTime()))
    throw new S3Error("AccessDenied", "AWS authentication requires a valid Date or x-amz-date header.");
  return d.toISOString().replace(/[-:]|\.\d{3}/g, "");
}

function parseLongDate(longDate: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(longDate);
  if (!m) throw new S3Error("AccessDenied", `The date "${longDate}" is not in ISO 8601 basic format.`);
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
}

/** Reaches the library's canonical request, which it keeps protected for its own signer. */
class Verifier extends SignatureV4 {
  canonicalRequest(request: HttpRequest, canonicalHeaders: HeaderBag, payloadHash: string): string {
    return this.createCanonicalRequest(request, canonicalHeaders, payloadHash);
  }
}

/**
 * Signing keys by (secret, date, region, service): deriving one is four HMACs, the same for every request of a key
 * on one day. The hashing itself is node's (hex digests in C++), the library's async hashers cost several times
 * more per request. Bounded; a full map is simply cleared.
 */
const signingKeys = new Map<string, Buffer>();
const MAX_SIGNING_KEYS = 10_000;

export function signingKey(secretAccessKey: string, shortDate: string, region: string, service: string): Buffer {
  const id = `${shortDate}/${region}/${service}/${secretAccessKey}`;
  let key = signingKeys.get(id);
  if (!key) {
    key = createHmac("sha256", `AWS4${secretAccessKey}`).update(shortDate).digest();
    for (const part of [region, service, "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
    if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.clear();
    signingKeys.set(id, key);
  }
  return key;
}

export function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Verifies the claim with the key's secret; throws SignatureDoesNotMatch, RequestTimeTooSkewed or AccessDenied
 * (expired URL). Returns what a streaming upload's chunk chain needs.
 */
export async function verifySignature(
  req: IncomingSigned,
  claim: SignedRequestClaim,
  secretAccessKey: string,
  now = new Date(),
): Promise<SigningContext> {
  const signingDate = parseLongDate(claim.longDate);
  if (claim.longDate.slice(0, 8) !== claim.shortDate)
    throw new S3Error("SignatureDoesNotMatch", "The credential date does not match the request date.");
  if (claim.presigned) {
    if (signingDate.getTime() - now.getTime() > MAX_SKEW_MS)
      throw new S3Error("AccessDenied", "Request is not valid yet.");
    if (now.getTime() > signingDate.getTime() + claim.expiresSeconds! * 1000)
      throw new S3Error("AccessDenied", "Request has expired.");
  } else if (Math.abs(now.getTime() - signingDate.getTime()) > MAX_SKEW_MS) {
    throw new S3Error(
      "RequestTimeTooSkewed",
      "The difference between the request time and the server's time is too large.",
    );
  }
  const signer = new Verifier({
    service: claim.service,
    region: claim.region,
    credentials: { accessKeyId: claim.accessKeyId, secretAccessKey },
    sha256: sha256Constructor,
    // S3 signs the path as sent, encoded once, without normalisation
    uriEscapePath: false,
  });
  const headers: HeaderBag = {};
  for (const name of claim.signedHeaders) {
    const v = header(req.headers, name);
    if (v === undefined) throw new S3Error("AccessDenied", `The signed header ${name} is missing.`);
    headers[name] = v;
  }
  const request: HttpRequest = {
    method: req.method,
    protocol: "http:",
    hostname: "",
    path: req.rawPath,
    query: req.query,
    headers,
  };
  const canonicalHeaders = getCanonicalHeaders(request, new Set(), new Set(claim.signedHeaders));
  const scope = createScope(claim.shortDate, claim.region, claim.service);
  const canonical = signer.canonicalRequest(request, canonicalHeaders, claim.payloadHash);
  const toSign = `${ALGORITHM_IDENTIFIER}\n${claim.longDate}\n${scope}\n${createHash("sha256").update(canonical).digest("hex")}`;
  const expected = createHmac("sha256", signingKey(secretAccessKey, claim.shortDate, claim.region, claim.service))
    .update(toSign)
    .digest("hex");
  if (!sameSignature(expected, claim.signature.toLowerCase()))
    throw new S3Error(
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    );
  return {
    signer,
    longDate: claim.longDate,
    signingDate,
    region: claim.region,
    service: claim.service,
    scope,
    seedSignature: expected,
  };
}
