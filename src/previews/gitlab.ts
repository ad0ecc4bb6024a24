import { STATUS_CODES } from "node:http";
import { gunzipSync } from "node:zlib";
import { OutboundError, parseOutboundUrl, type Outbound } from "../net/outbound.js";

/**
 * The two GitLab REST API (v4) calls previews make: the source archive of a commit and a merge-request note. Every
 * call goes through the guarded outbound client (src/net/outbound.ts), carries the token in `PRIVATE-TOKEN`, is
 * bounded in time and size and never follows a redirect (the token would go along). Errors say the status, never
 * what the server answered.
 */
export class PreviewGitLabError extends Error {
  constructor(
    message: string,
    readonly forbidden = false,
  ) {
    super(message);
  }
}

/** the largest source archive taken (the builds area refuses larger unpacked sources itself) */
const MAX_ARCHIVE_BYTES = 256 * 1024 * 1024;

/** `https://gitlab.example.com/` and `.../api/v4` both name the instance; http(s) only, no query or credentials. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = parseOutboundUrl(raw);
  } catch (err) {
    throw new PreviewGitLabError(`base_url: ${(err as Error).message}`);
  }
  if (url.search || raw.includes("?")) throw new PreviewGitLabError("base_url must not carry a query.");
  return url
    .toString()
    .replace(/\/+$/, "")
    .replace(/\/api\/v4$/, "");
}

export class PreviewGitLab {
  constructor(
    private readonly t: { baseUrl: string; token: string; project: string; timeoutMs: number; outbound: Outbound },
  ) {}

  private async call(method: string, path: string, body?: unknown, maxBytes = 1024 * 1024) {
    const what = `${method} ${path.split("?")[0]}`;
    const base = normalizeBaseUrl(this.t.baseUrl);
    try {
      const res = await this.t.outbound.request(
        `${base}/api/v4/projects/${encodeURIComponent(this.t.project)}${path}`,
        {
          method,
          headers: {
            "PRIVATE-TOKEN": this.t.token,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          timeoutMs: this.t.timeoutMs,
          maxBytes,
        },
      );
      if (res.status >= 200 && res.status < 300) return res;
      const text = STATUS_CODES[res.status] ? ` ${STATUS_CODES[res.status]}` : "";
      throw new PreviewGitLabError(`GitLab answered ${what} with ${res.status}${text}.`);
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      if (err.reason === "forbidden") throw new PreviewGitLabError(`base_url: ${err.message}`, true);
      throw new PreviewGitLabError(`GitLab at ${base} could not be reached for ${what} (${err.reason}).`);
    }
  }

  /** GET /projects/:id/repository/archive.tar.gz?sha= → the commit's source as tar.gz */
  async archive(sha: string): Promise<Buffer> {
    const res = await this.call(
      "GET",
      `/repository/archive.tar.gz?sha=${encodeURIComponent(sha)}`,
      undefined,
      MAX_ARCHIVE_BYTES,
    );
    return res.bytes;
  }

  /** POST /projects/:id/merge_requests/:iid/notes {body} */
  async note(iid: number, body: string): Promise<void> {
    await this.call("POST", `/merge_requests/${iid}/notes`, { body });
  }
}

/**
 * GitLab's archives hold one top folder (`<project>-<sha>-<sha>/`) after git's pax global header: the build context
 * is that folder. "." when the archive has none.
 */
export function archiveTopFolder(archive: Buffer): string {
  let tar: Buffer;
  try {
    tar = gunzipSync(archive);
  } catch {
    throw new PreviewGitLabError("GitLab's archive is not a gzip file.");
  }
  const tops = new Set<string>();
  let loose = false;
  for (let at = 0; at + 512 <= tar.length;) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const field = (from: number, len: number) =>
      h
        .subarray(from, from + len)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const size = parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const name = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    if (type !== "g" && type !== "x") {
      const parts = name.replace(/^\.\//, "").split("/");
      if (parts.length > 1 && parts[0]) tops.add(parts[0]);
      else if (type !== "5") loose = true;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return tops.size === 1 && !loose ? [...tops][0]! : ".";
}
