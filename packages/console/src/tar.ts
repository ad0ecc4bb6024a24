/**
 * A tar writer for the browser: files the user picked (a folder input, or any Blobs) packed as a POSIX ustar
 * archive without reading them into memory (the archive is a Blob made of headers and the files themselves).
 * Paths longer than ustar's name field are split into its prefix field; what still does not fit (or a file of
 * 8 GiB and more) gets a PAX extended header, which every tar reader of the last twenty years understands.
 */

export interface TarFile {
  /** the path inside the archive, with "/" between folders and no leading "/" */
  path: string;
  data: Blob;
  /** seconds since 1970 (default: now) */
  mtime?: number;
  /** permission bits (default 0o644) */
  mode?: number;
}

/** what the archive Blob is made of: header blocks, PAX records, padding, and the files themselves */
type Part = Blob | Uint8Array<ArrayBuffer>;

const BLOCK = 512;
const encoder = new TextEncoder();
const MAX_OCTAL_SIZE = 8 ** 11 - 1; // 11 octal digits in the size field

/** Writes `text` (ASCII) into the header at `at`, at most `len` bytes. */
function put(h: Uint8Array, at: number, len: number, bytes: Uint8Array | string): void {
  const b = typeof bytes === "string" ? encoder.encode(bytes) : bytes;
  h.set(b.subarray(0, len), at);
}

const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0") + "\0";

/** Splits a path into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a "/", or null when it cannot. */
export function splitPath(path: string): { prefix: string; name: string } | null {
  const bytes = encoder.encode(path);
  if (bytes.length <= 100) return { prefix: "", name: path };
  for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    const p = encoder.encode(prefix).length;
    const n = encoder.encode(name).length;
    if (p <= 155 && n <= 100 && n > 0) return { prefix, name };
  }
  return null;
}

/** One 512-byte header block (type "0" a file, "x" a PAX extended header for the next entry). */
export function header(fields: {
  name: string;
  prefix?: string;
  size: number;
  mtime: number;
  mode: number;
  type: "0" | "x";
}): Uint8Array<ArrayBuffer> {
  const h = new Uint8Array(BLOCK);
  put(h, 0, 100, fields.name);
  put(h, 100, 8, octal(fields.mode, 8));
  put(h, 108, 8, octal(0, 8)); // uid
  put(h, 116, 8, octal(0, 8)); // gid
  put(h, 124, 12, octal(Math.min(fields.size, MAX_OCTAL_SIZE), 12));
  put(h, 136, 12, octal(Math.max(0, Math.floor(fields.mtime)), 12));
  h.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  put(h, 156, 1, fields.type);
  put(h, 257, 6, "ustar\0");
  put(h, 263, 2, "00");
  put(h, 345, 155, fields.prefix ?? "");
  let sum = 0;
  for (const b of h) sum += b;
  put(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

/** A PAX record "<len> <key>=<value>\n", whose length counts its own digits. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyLen = encoder.encode(body).length;
  const digits = String(bodyLen).length;
  let len = bodyLen + digits;
  if (String(len).length > digits) len += 1;
  return `${len}${body}`;
}

const padding = (size: number) => new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);

/** The archive's parts for one file: its header(s), its bytes, and the padding to a whole block. */
function entry(f: TarFile): Part[] {
  const path = f.path.replace(/^\/+/, "");
  if (!path || path.split("/").some((s) => s === "..")) throw new Error(`refused path in archive: ${f.path}`);
  const mtime = f.mtime ?? Date.now() / 1000;
  const mode = f.mode ?? 0o644;
  const split = splitPath(path);
  const parts: Part[] = [];
  const pax: string[] = [];
  if (!split) pax.push(paxRecord("path", path));
  if (f.data.size > MAX_OCTAL_SIZE) pax.push(paxRecord("size", String(f.data.size)));
  if (pax.length) {
    const body = new Uint8Array(encoder.encode(pax.join("")));
    const paxName = `PaxHeader/${path.split("/").pop()!.slice(0, 80)}`;
    parts.push(header({ name: paxName, size: body.length, mtime, mode: 0o644, type: "x" }), body);
    parts.push(padding(body.length));
  }
  // with a PAX path the ustar name is only a fallback for old readers: the path's tail, cut to fit
  const fallback = split ?? { prefix: "", name: path.slice(-100) };
  parts.push(header({ ...fallback, size: f.data.size, mtime, mode, type: "0" }), f.data, padding(f.data.size));
  return parts;
}

/** The files as one tar archive (two zero blocks at the end, as the format asks). */
export function tarBlob(files: TarFile[]): Blob {
  const parts = files.flatMap(entry);
  parts.push(new Uint8Array(BLOCK * 2));
  return new Blob(parts, { type: "application/x-tar" });
}

/** The archive gzip-compressed by the browser itself (CompressionStream), as a Blob. */
export async function gzipBlob(blob: Blob): Promise<Blob> {
  const stream = blob.stream().pipeThrough(new CompressionStream("gzip"));
  return new Blob([await new Response(stream).blob()], { type: "application/gzip" });
}
