import { stat } from "node:fs/promises";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { x as extract, type ReadEntry } from "tar";
import { ApiError } from "../http/errors.js";

/** Entry kinds a build context may hold; devices and FIFOs are refused. */
const ALLOWED = new Set(["File", "OldFile", "ContiguousFile", "Directory", "SymbolicLink", "Link"]);
const MAX_ENTRIES = 200_000;

export interface UnpackLimits {
  /** compressed bytes the client may send */
  maxSourceBytes: number;
  /** bytes the unpacked files may hold */
  maxContextBytes: number;
}

/** A path inside the archive that stays inside it: relative, no `..` component, no NUL. */
export function insidePath(p: string): boolean {
  if (!p || p.includes("\0") || p.startsWith("/") || p.includes("\\")) return false;
  return !p.split("/").includes("..");
}

/** Why an entry may not be unpacked, or null. Links must point inside the archive too. */
function refusal(entry: ReadEntry): string | null {
  const name = entry.path;
  if (!ALLOWED.has(entry.type)) return `${name}: ${entry.type} entries are not allowed in a build context`;
  if (!insidePath(name.replace(/^\.\//, ""))) return `${name}: the path leaves the archive`;
  if (entry.type === "SymbolicLink" || entry.type === "Link") {
    // a hard link names an archive path; a symbolic link is read from its own directory
    const target = entry.linkpath ?? "";
    const base = entry.type === "Link" ? target : path.posix.join(path.posix.dirname(name), target);
    const resolved = path.posix.normalize(base);
    if (target.startsWith("/") || resolved === ".." || resolved.startsWith("../"))
      return `${name}: the link points outside the archive (${target})`;
  }
  return null;
}

/** Counts the bytes passing through; beyond the limit the upload fails with 413. */
function counter(limit: number, seen: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen.bytes += chunk.length;
      if (seen.bytes > limit)
        return done(
          new ApiError(
            "payload_too_large",
            `The source archive is larger than ${Math.floor(limit / 1024 / 1024)} MiB (BUILD_MAX_SOURCE_MB).`,
          ),
        );
      done(null, chunk);
    },
  });
}

/**
 * Unpacks a (gzipped) tar archive from the request into `dir` as it arrives, refusing anything that would
 * leave the directory (absolute paths, `..`, links pointing out), devices and FIFOs, and archives beyond the
 * size limits (compressed and unpacked). Nothing is kept of a refused archive: the caller removes `dir`.
 * Returns the compressed size.
 */
export async function unpackSource(body: Readable, dir: string, limits: UnpackLimits): Promise<number> {
  const seen = { bytes: 0 };
  let unpacked = 0;
  let entries = 0;
  let refused: string | null = null;
  const unpack = extract({
    cwd: dir,
    strict: true,
    preservePaths: false,
    // files are the builder's input, owned by the platform's user whatever the archive says
    preserveOwner: false,
    filter: (_p, entry) => {
      const e = entry as ReadEntry;
      if (refused) return false;
      entries++;
      unpacked += e.size ?? 0;
      refused =
        refusal(e) ??
        (unpacked > limits.maxContextBytes
          ? `the unpacked source is larger than ${Math.floor(limits.maxContextBytes / 1024 / 1024)} MiB (BUILD_MAX_CONTEXT_MB)`
          : entries > MAX_ENTRIES
            ? `the archive has more than ${MAX_ENTRIES} entries`
            : null);
      if (refused) unpack.abort(new ApiError("invalid_request", `The source archive was refused: ${refused}.`));
      return !refused;
    },
  });
  try {
    await pipeline(body, counter(limits.maxSourceBytes, seen), unpack);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (refused) throw new ApiError("invalid_request", `The source archive was refused: ${refused}.`);
    const code = (err as { code?: string }).code;
    throw new ApiError(
      "invalid_request",
      `The source is not a readable tar.gz archive${code ? ` (${code})` : ""}: ${(err as Error).message}`,
    );
  }
  if (refused) throw new ApiError("invalid_request", `The source archive was refused: ${refused}.`);
  return seen.bytes;
}

/** The Dockerfile a build will use, checked to exist as a regular file inside the unpacked context. */
export async function findDockerfile(contextDir: string, dockerfile: string): Promise<string> {
  const full = path.join(contextDir, dockerfile);
  const info = await stat(full).catch(() => null);
  if (!info?.isFile())
    throw new ApiError("invalid_request", `The source archive has no file ${dockerfile} in its build context.`);
  return full;
}
