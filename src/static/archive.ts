/**
 * Uploaded archives (tar, tar.gz, zip): spooled to a file under a size limit, their format told by magic bytes,
 * then unpacked entry by entry into a work directory as one file per distinct content (named by its sha256).
 * Every entry is checked before a byte of it is kept: no absolute paths, no `..`, no links, no devices.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { open, rename } from "node:fs/promises";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import path from "node:path";
import { Parser, type ReadEntry } from "tar";
import yauzl from "yauzl";
import mime from "mime-types";
import { ApiError } from "../http/errors.js";

export type ArchiveKind = "tar" | "gzip" | "zip";

export interface Limits {
  /** the archive, and the files it unpacks to, in bytes */
  maxBytes: number;
  maxFiles: number;
}

/** One file of an unpacked archive; its content is `<dir>/<hash>`. */
export interface UnpackedFile {
  path: string;
  hash: string;
  size: number;
  contentType: string;
}

const MAX_PATH_BYTES = 1024;

const bad = (message: string) => new ApiError("bad_archive", message);
const tooLarge = (limits: Limits, what: string) =>
  new ApiError("payload_too_large", `${what} is larger than this platform accepts (${limits.maxBytes} bytes).`);

/**
 * Writes the request body to `file`, refusing more than maxBytes (413). The request is never destroyed, so the
 * answer still reaches the client: what is left of an oversized body is read and dropped.
 */
export function spool(body: Readable, file: string, limits: Limits): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(file, { flags: "wx" });
    let size = 0;
    let settled = false;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      body.off("data", onData);
      if (err) {
        body.resume();
        out.destroy();
        return reject(err);
      }
      resolve(size);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes) return finish(tooLarge(limits, "The archive"));
      if (!out.write(chunk)) {
        body.pause();
        out.once("drain", () => !settled && body.resume());
      }
    };
    body.on("data", onData);
    body.once("end", () => out.end(() => finish(null)));
    body.on("error", (err) => finish(err));
    body.once("close", () => {
      if (!body.readableEnded) finish(new ApiError("invalid_request", "The upload was cut off before its end."));
    });
    out.on("error", (err) => finish(err));
  });
}

/** The archive's format by its first bytes (the declared content type is only a hint for old tar files). */
export async function detect(file: string, declared: string | undefined): Promise<ArchiveKind> {
  const fh = await open(file, "r");
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, 512, 0);
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return "zip";
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x06054b50) throw bad("The zip archive is empty.");
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
    if (bytesRead === 512 && head.toString("latin1", 257, 262) === "ustar") return "tar";
    // a pre-POSIX tar has no magic: taken as tar when declared so, and tar's own checksum decides
    if (bytesRead === 512 && declared === "application/x-tar") return "tar";
    if (bytesRead === 0) throw bad("The upload is empty; send a tar, tar.gz or zip archive.");
    throw bad("The upload is not a tar, tar.gz or zip archive.");
  } finally {
    await fh.close();
  }
}

/**
 * A path inside an archive as the site's path ("assets/app.js"), or null for the archive's root. Refuses what
 * could leave the site's tree or that no URL can name.
 */
export function sitePath(raw: string): string | null {
  const named = JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw bad(`The entry ${named} has a control character in its path.`);
  if (raw.includes("\\")) throw bad(`The entry ${named} has a backslash in its path; use "/" between folders.`);
  if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) throw bad(`The entry ${named} has an absolute path.`);
  const parts = raw.split("/").filter((s) => s !== "" && s !== ".");
  if (parts.includes("..")) throw bad(`The entry ${named} has ".." in its path (path traversal).`);
  const clean = parts.join("/");
  if (Buffer.byteLength(clean) > MAX_PATH_BYTES)
    throw bad(`The entry ${named} has a path over ${MAX_PATH_BYTES} bytes.`);
  return clean === "" ? null : clean;
}

/** The content type a file is served with: by extension, text types in UTF-8. */
export function contentTypeOf(filePath: string): string {
  const type = mime.lookup(filePath);
  return (type && mime.contentType(type)) || "application/octet-stream";
}

/**
 * One wrapping top-level folder is dropped when every file is inside it (`dist/index.html` → `index.html`), as
 * archives made of a build folder usually are. Returns the folder dropped, or null.
 */
export function stripWrapper(files: UnpackedFile[]): string | null {
  if (!files.length) return null;
  const first = files[0].path.split("/")[0];
  if (!files.every((f) => f.path.startsWith(`${first}/`))) return null;
  for (const f of files) f.path = f.path.slice(first.length + 1);
  return first;
}

/** Keeps the contents of one archive: hashes and sizes them, each distinct content once, within the limits. */
class Collector {
  private readonly results: (UnpackedFile | null)[] = [];
  private total = 0;
  private files = 0;

  constructor(
    private readonly dir: string,
    private readonly limits: Limits,
  ) {}

  /** reserves a slot for a file entry (archive order decides which of two equal paths wins: the last) */
  slot(): number {
    if (++this.files > this.limits.maxFiles)
      throw new ApiError("payload_too_large", `The archive has more than ${this.limits.maxFiles} files.`);
    this.results.push(null);
    return this.results.length - 1;
  }

  /** refuses a file whose declared size cannot fit, before reading it */
  expect(size: number): void {
    if (this.total + size > this.limits.maxBytes) throw tooLarge(this.limits, "The unpacked archive");
  }

  async store(slot: number, filePath: string, content: Readable): Promise<void> {
    const hash = createHash("sha256");
    let size = 0;
    const count = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        size += chunk.length;
        this.total += chunk.length;
        if (this.total > this.limits.maxBytes) return done(tooLarge(this.limits, "The unpacked archive"));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const tmp = path.join(this.dir, `part-${slot}`);
    await pipeline(content, count, createWriteStream(tmp, { flags: "wx" }));
    const digest = hash.digest("hex");
    // equal contents share one file; rename replaces an earlier copy of the same bytes
    await rename(tmp, path.join(this.dir, digest));
    this.results[slot] = { path: filePath, hash: digest, size, contentType: contentTypeOf(filePath) };
  }

  /** the files by path, the last entry of a path winning */
  done(): UnpackedFile[] {
    const byPath = new Map<string, UnpackedFile>();
    for (const f of this.results) if (f) byPath.set(f.path, f);
    if (!byPath.size) throw bad("The archive has no files.");
    return [...byPath.values()];
  }
}

/** Unpacks an archive into `dir` (one file per distinct content, named by its sha256); refuses bad entries. */
export async function unpack(file: string, kind: ArchiveKind, dir: string, limits: Limits): Promise<UnpackedFile[]> {
  const c = new Collector(dir, limits);
  if (kind === "zip") await unpackZip(file, c);
  else await unpackTar(file, c);
  return c.done();
}

const TAR_SKIPPED = new Set(["Directory", "GNUDumpDir"]);
const TAR_FILES = new Set(["File", "OldFile", "ContiguousFile"]);
const TAR_REFUSED: Record<string, string> = {
  SymbolicLink: "is a symbolic link",
  Link: "is a hard link",
  CharacterDevice: "is a device",
  BlockDevice: "is a device",
  FIFO: "is a named pipe",
};

async function unpackTar(file: string, c: Collector): Promise<void> {
  // node-tar: strict, so a checksum failure or a truncated archive is an error; gzip is recognised by itself
  const parser = new Parser({ strict: true, maxDecompressionRatio: Number.MAX_SAFE_INTEGER });
  let failure: unknown = null;
  const stores: Promise<void>[] = [];
  // an entry being read when the parse fails (truncated or damaged input) never ends by itself
  const reading = new Set<ReadEntry>();
  const fail = (err: unknown) => {
    failure ??= err;
    parser.abort(err instanceof Error ? err : new Error(String(err)));
  };
  parser.on("entry", (entry: ReadEntry) => {
    if (failure) return void entry.resume();
    try {
      const where = sitePath(entry.path);
      const refused = TAR_REFUSED[entry.type];
      if (refused) throw bad(`The entry ${JSON.stringify(entry.path)} ${refused}; only files and folders are taken.`);
      if (TAR_SKIPPED.has(entry.type) || !TAR_FILES.has(entry.type) || where === null) return void entry.resume();
      c.expect(entry.size);
      const slot = c.slot();
      reading.add(entry);
      entry.once("end", () => reading.delete(entry));
      stores.push(c.store(slot, where, entry as unknown as Readable).catch(fail));
    } catch (err) {
      entry.resume();
      fail(err);
    }
  });
  const parsed = new Promise<void>((resolve, reject) => {
    // a damaged archive may raise several errors (one per bad header, then the abort): every one is handled
    parser.on("error", reject);
    parser.once("end", () => resolve());
    const input = createReadStream(file);
    input.on("error", reject);
    input.pipe(parser as unknown as NodeJS.WritableStream);
  });
  const outcome = await parsed.then(
    () => null,
    (err: Error) => err,
  );
  for (const entry of reading) {
    entry.on("error", () => {});
    entry.destroy(new Error("the archive ended inside this entry"));
  }
  await Promise.allSettled(stores);
  // an entry's own refusal names it; else the parser's complaint says what is wrong with the archive
  if (failure instanceof ApiError) throw failure;
  if (outcome) throw bad(`The archive is not a valid tar or tar.gz file (${outcome.message}).`);
  if (failure) throw failure;
}

const S_IFMT = 0o170000;
const ZIP_REFUSED: Record<number, string> = {
  0o120000: "is a symbolic link",
  0o020000: "is a device",
  0o060000: "is a device",
  0o010000: "is a named pipe",
  0o140000: "is a socket",
};

async function unpackZip(file: string, c: Collector): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true });
  } catch (err) {
    throw bad(`The archive is not a valid zip file (${(err as Error).message}).`);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", (err: Error) => reject(bad(`The zip file is damaged (${err.message}).`)));
      zip.once("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        zipEntry(zip, entry, c).then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

async function zipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, c: Collector): Promise<void> {
  // strict: a backslash stays one, and is refused by sitePath
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  const where = sitePath(name);
  const unix = entry.versionMadeBy >> 8 === 3;
  const type = unix ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
  if (ZIP_REFUSED[type])
    throw bad(`The entry ${JSON.stringify(name)} ${ZIP_REFUSED[type]}; only files and folders are taken.`);
  if (name.endsWith("/") || type === 0o040000 || where === null) return;
  if (entry.isEncrypted()) throw bad(`The entry ${JSON.stringify(name)} is encrypted.`);
  c.expect(entry.uncompressedSize);
  const slot = c.slot();
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw bad(`The entry ${JSON.stringify(name)} cannot be read (${(err as Error).message}).`);
  }
  await c.store(slot, where, stream).catch((err: unknown) => {
    if (err instanceof ApiError) throw err;
    throw bad(`The entry ${JSON.stringify(name)} is damaged (${(err as Error).message}).`);
  });
}
