/**
 * Release bundles (README: src/onprem/README.md, "Releases"): the operator publishes the file (the server measures
 * size and SHA-256 while storing it under the releases directory); approved owners whose caller accepted the terms
 * get a download address valid one hour, signed with HMAC-SHA256 under a key derived from the platform key; the
 * public file route checks the signature and expiry (403 download_expired) and streams the stored bytes.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import type { Principal } from "../auth/principal.js";
import { auditedTransaction } from "../audit/record.js";
import { ApiError } from "../http/errors.js";
import { isUniqueViolation } from "../store/db.js";
import { actingFor, requireAccessAndTerms, type Scope } from "./acting.js";
import type { AccessDeps } from "./access-service.js";
import * as repo from "./repo/releases.js";

/** Spec, Limits: a download address is valid one hour. */
export const DOWNLOAD_TTL_SECONDS = 3600;

export interface ReleasesDeps extends AccessDeps {
  dir: string;
  /** the HMAC key of download addresses */
  urlKey: Buffer;
}

/** The signature of a download address: release id and expiry (Unix seconds). */
export function downloadSignature(key: Buffer, releaseId: string, expires: number): string {
  return createHmac("sha256", key).update(`onprem-release:${releaseId}:${expires}`).digest("base64url");
}

export function releasesService(deps: ReleasesDeps) {
  const { db, config, dir } = deps;
  const fileOf = (id: string) => path.join(dir, `${id}.bundle`);

  async function publish(
    body: Readable,
    meta: { version: string; architecture: string; filename?: string; sha256?: string },
  ): Promise<repo.ReleaseRow> {
    await mkdir(dir, { recursive: true });
    const id = randomUUID();
    const temp = path.join(dir, `.upload-${id}`);
    const hash = createHash("sha256");
    let size = 0;
    try {
      await pipeline(
        body,
        new Transform({
          transform(chunk: Buffer, _enc, done) {
            hash.update(chunk);
            size += chunk.length;
            done(null, chunk);
          },
        }),
        createWriteStream(temp, { mode: 0o640 }),
      );
      const sha256 = hash.digest("hex");
      if (size === 0) throw new ApiError("invalid_request", "The release file is empty: send its bytes as the body.");
      if (meta.sha256 && meta.sha256.toLowerCase() !== sha256)
        throw new ApiError(
          "invalid_request",
          `The uploaded bytes have SHA-256 ${sha256}, not the sha256 given (${meta.sha256}); nothing was published.`,
        );
      const filename = meta.filename ?? `platform-onprem-${meta.version}-${meta.architecture}.tar.gz`;
      // the bytes are in place before the row names them: a listed release can always be served
      await rename(temp, fileOf(id));
      try {
        return await auditedTransaction(db, null, (tx) =>
          repo.insertRelease(tx, {
            id,
            version: meta.version,
            architecture: meta.architecture,
            size,
            sha256,
            filename,
          }),
        );
      } catch (err) {
        await rm(fileOf(id), { force: true });
        if (isUniqueViolation(err))
          throw new ApiError("conflict", `Version ${meta.version} for ${meta.architecture} is already published.`);
        throw err;
      }
    } finally {
      await rm(temp, { force: true });
    }
  }

  const list = () => repo.listReleases(db);
  const latest = () => repo.latestReleases(db);

  /** A download address valid one hour, for an approved owner whose caller accepted the current terms. */
  async function download(p: Principal, id: string, scope: Scope, base: string) {
    const release = await repo.findRelease(db, id);
    if (!release) throw new ApiError("not_found", "No such release.");
    const acting = await actingFor(deps, p, scope, "member");
    await requireAccessAndTerms(db, acting, config.termsVersion);
    const expires = Math.floor(Date.now() / 1000) + DOWNLOAD_TTL_SECONDS;
    const sig = downloadSignature(deps.urlKey, id, expires);
    return {
      url: `${base}/v1/onprem/releases/${id}/file?expires=${expires}&sig=${sig}`,
      expires_at: new Date(expires * 1000),
      release,
    };
  }

  /** The bytes behind a signed address: a wrong signature or a past expiry is 403 download_expired. */
  async function open(id: string, expires: number, sig: string) {
    const good = Buffer.from(downloadSignature(deps.urlKey, id, expires));
    const given = Buffer.from(sig);
    if (given.length !== good.length || !timingSafeEqual(given, good))
      throw new ApiError("download_expired", "The download address is not valid (altered); ask for a new one.");
    if (Date.now() / 1000 >= expires)
      throw new ApiError("download_expired", "The download address has expired; ask for a new one.");
    const release = await repo.findRelease(db, id);
    if (!release) throw new ApiError("not_found", "No such release.");
    const info = await stat(fileOf(id)).catch(() => null);
    if (!info || info.size !== release.size)
      throw new ApiError("service_unavailable", "The release file is missing from the releases directory.");
    return { release, stream: createReadStream(fileOf(id)) };
  }

  return { publish, list, latest, download, open };
}

export type ReleasesService = ReturnType<typeof releasesService>;
