/**
 * Files an agent gives inline (path → content) packed as a .tar.gz, the archive the sites and builds uploads take.
 * A plain ustar writer (the prefix field for paths up to 255 bytes); gzip from node:zlib.
 */
import { gzipSync } from "node:zlib";

export const MAX_INLINE_BYTES = 10 * 1024 * 1024;

/** Content is UTF-8 text, or base64 after a `base64:` prefix (images, fonts). */
export function decodeFiles(files: Record<string, unknown>): { path: string; data: Buffer }[] {
  const out: { path: string; data: Buffer }[] = [];
  let total = 0;
  for (const [raw, content] of Object.entries(files)) {
    const path = raw.replace(/^\.?\/+/, "");
    if (!path || path.split("/").some((p) => p === ".." || p === "") || path.includes("\0"))
      throw new Error(`"${raw}" is not a relative file path`);
    if (typeof content !== "string") throw new Error(`the content of "${raw}" must be a string`);
    const data = content.startsWith("base64:") ? Buffer.from(content.slice(7), "base64") : Buffer.from(content, "utf8");
    total += data.length;
    if (total > MAX_INLINE_BYTES) throw new Error(`the files exceed ${MAX_INLINE_BYTES / 1024 / 1024} MiB`);
    out.push({ path, data });
  }
  if (!out.length) throw new Error("files is empty");
  return out;
}

function header(path: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  let name = path;
  let prefix = "";
  if (Buffer.byteLength(path) > 100) {
    const cut = path.lastIndexOf("/", path.length - 1);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155)
      throw new Error(`the path "${path}" is too long for the archive (255 bytes)`);
  }
  const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, "0") + "\0";
  h.write(name, 0, 100, "utf8");
  h.write(octal(0o644, 8), 100, "ascii");
  h.write(octal(0, 8), 108, "ascii");
  h.write(octal(0, 8), 116, "ascii");
  h.write(octal(size, 12), 124, "ascii");
  h.write(octal(Math.floor(Date.now() / 1000), 12), 136, "ascii");
  h.fill(" ", 148, 156);
  h.write("0", 156, "ascii");
  h.write("ustar\0", 257, "ascii");
  h.write("00", 263, "ascii");
  h.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
  return h;
}

export function tarGz(files: { path: string; data: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(header(f.path, f.data.length), f.data, Buffer.alloc((512 - (f.data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}
