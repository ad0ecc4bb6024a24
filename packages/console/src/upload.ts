import { apiErrorOf, PlatformNetworkError } from "@hosting-platform/sdk";
import { csrfToken } from "./api";
import { gzipBlob, tarBlob, type TarFile } from "./tar";

/**
 * Archive uploads of the console: a `PUT` of raw bytes to an upload URL the API handed out (a static site
 * deployment's `upload_url`, a build's single-use `upload_url`). The SDK's fetch has no upload progress, so this
 * one request goes through XMLHttpRequest, with the same session cookie and CSRF header as every SDK call, to
 * the same public API; its errors become the SDK's PlatformApiError, shown like any other.
 */
export function putArchive(
  url: string,
  body: Blob,
  contentType: string,
  onProgress: (sent: number, total: number) => void,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.responseType = "arraybuffer";
    xhr.withCredentials = false; // same origin: the cookie goes anyway, and nothing is sent elsewhere
    xhr.setRequestHeader("content-type", contentType);
    xhr.setRequestHeader("x-platform-csrf", csrfToken());
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onerror = () => reject(new PlatformNetworkError(`cannot reach ${new URL(url, location.href).host}`));
    xhr.ontimeout = xhr.onerror;
    xhr.onload = async () => {
      const headers = new Headers();
      for (const line of xhr
        .getAllResponseHeaders()
        .trim()
        .split(/[\r\n]+/)) {
        const i = line.indexOf(":");
        if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      }
      const response = new Response(xhr.status === 204 ? null : xhr.response, { status: xhr.status, headers });
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(body.size, body.size);
        resolve(xhr.status === 204 ? null : await response.json().catch(() => null));
      } else reject(await apiErrorOf(response, "PUT", new URL(url, location.href).pathname));
    };
    xhr.send(body);
  });
}

/** Files and folders that never belong in an upload: version control and the desktop's own leftovers. */
const SKIPPED = /(^|\/)(\.git|\.hg|\.svn)(\/|$)|(^|\/)(\.DS_Store|Thumbs\.db|desktop\.ini)$/;

export interface PickedFolder {
  /** the chosen folder's name (its files are packed relative to it) */
  name: string;
  files: TarFile[];
  bytes: number;
  /** how many files were left out (.git and the like) */
  skipped: number;
}

/**
 * The files of a folder input (`webkitdirectory`): their paths relative to the chosen folder, so the folder
 * itself is the archive's root (a site's index.html at /index.html, a build's Dockerfile at the context root).
 */
export function pickedFolder(list: FileList | null): PickedFolder | null {
  const all = [...(list ?? [])];
  if (all.length === 0) return null;
  const rel = (f: File) => f.webkitRelativePath || f.name;
  const top = rel(all[0]).split("/")[0];
  const strip = all.every((f) => rel(f).startsWith(`${top}/`));
  const files: TarFile[] = [];
  let skipped = 0;
  for (const f of all) {
    const path = strip ? rel(f).slice(top.length + 1) : rel(f);
    if (SKIPPED.test(path)) {
      skipped++;
      continue;
    }
    files.push({ path, data: f, mtime: f.lastModified / 1000 });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { name: strip ? top : "", files, bytes: files.reduce((s, f) => s + f.data.size, 0), skipped };
}

/** The folder as one archive: tar, or tar.gz compressed in the browser. */
export async function packFolder(folder: PickedFolder, gzip: boolean): Promise<Blob> {
  const tar = tarBlob(folder.files);
  return gzip ? gzipBlob(tar) : tar;
}

/** An archive file's media type by its name (the API tells the format by its first bytes anyway). */
export function archiveType(name: string): string {
  const n = name.toLowerCase();
  if (n.endsWith(".zip")) return "application/zip";
  if (n.endsWith(".tar")) return "application/x-tar";
  if (n.endsWith(".tar.gz") || n.endsWith(".tgz") || n.endsWith(".gz")) return "application/gzip";
  return "application/octet-stream";
}

/** Bytes in words: 1.2 MB, 840 KB, 12 B (decimal units, as file managers show them). */
export function bytes(n: number, locale = "en"): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  const digits = i === 0 || v >= 100 ? 0 : 1;
  return `${new Intl.NumberFormat(locale === "ko" ? "ko-KR" : "en-US", { maximumFractionDigits: digits }).format(v)} ${units[i]}`;
}
