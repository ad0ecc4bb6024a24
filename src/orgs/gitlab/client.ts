import { STATUS_CODES } from "node:http";
import { OutboundError, parseOutboundUrl, type Outbound } from "../../net/outbound.js";

/**
 * The GitLab REST API (v4) calls the integration makes, with the documented request and answer shapes. Every call
 * goes through the guarded outbound client (src/net/outbound.ts: no internal addresses unless OUTBOUND_ALLOW says
 * so), carries the token in `PRIVATE-TOKEN`, is bounded in time and size and never follows a redirect (the token
 * would go along). Failures are GitLabError with a sentence for people: the status and a generic reason, never what
 * the server answered (the address may be one the caller could not reach themselves).
 */

export class GitLabError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    /** destination_forbidden: the address is one the platform does not call (a 400 where a person asked) */
    readonly code: "destination_forbidden" | "invalid_url" | null = null,
  ) {
    super(message);
  }
}

export interface GitLabTarget {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  outbound: Outbound;
}

export interface GitLabGroup {
  id: number;
  name: string;
  full_path: string;
  web_url: string;
}

export interface GitLabProject {
  id: number;
  path_with_namespace: string;
  default_branch: string | null;
  web_url: string;
}

export interface GitLabFile {
  /** base64 */
  content: string;
  last_commit_id: string;
}

export interface TreeEntry {
  /** the git blob id (sha1 of "blob <size>\0<content>") */
  id: string;
  type: "blob" | "tree" | "commit";
  path: string;
}

export interface CommitAction {
  action: "create" | "update" | "delete";
  file_path: string;
  content?: string;
  encoding?: "text" | "base64";
}

/**
 * `https://gitlab.example.com/` and `.../api/v4` both name the instance; only http(s), without credentials, a query
 * or a fragment (a bare `#` or `?` included: `…/x.json#` once made every path after it a fragment).
 */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = parseOutboundUrl(raw);
  } catch (err) {
    throw new GitLabError(`base_url: ${(err as Error).message}`, null, "invalid_url");
  }
  if (url.search || raw.includes("?")) throw new GitLabError("base_url must not carry a query.", null, "invalid_url");
  return url
    .toString()
    .replace(/\/+$/, "")
    .replace(/\/api\/v4$/, "");
}

const enc = encodeURIComponent;

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

const statusText = (status: number) => `${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ""}`;

/** GitLab answers a JSON object (or list) of the documented shape; anything else is not a GitLab API. */
function shaped<T>(body: unknown, ok: (b: Record<string, unknown>) => boolean, what: string, base: string): T {
  if (!body || typeof body !== "object" || !ok(body as Record<string, unknown>))
    throw new GitLabError(`${base} answered ${what} with something that is not GitLab's API; check base_url.`);
  return body as T;
}

/** the largest answer read (a tree page of 100 entries, a file of the size GitLab's API returns inline) */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export class GitLabClient {
  readonly baseUrl: string;

  constructor(private readonly t: GitLabTarget) {
    this.baseUrl = normalizeBaseUrl(t.baseUrl);
  }

  private async call<T>(
    method: string,
    path: string,
    opts: { body?: unknown; allow404?: boolean } = {},
  ): Promise<{ data: T | null; header: (name: string) => string | null }> {
    const what = `${method} ${path.split("?")[0]}`;
    let res;
    try {
      res = await this.t.outbound.request(`${this.baseUrl}/api/v4${path}`, {
        method,
        headers: {
          "PRIVATE-TOKEN": this.t.token,
          accept: "application/json",
          ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
        },
        body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
        timeoutMs: this.t.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
      });
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      if (err.reason === "forbidden") throw new GitLabError(`base_url: ${err.message}`, null, "destination_forbidden");
      if (err.reason === "timeout")
        throw new GitLabError(`GitLab at ${this.baseUrl} did not answer ${what} within ${this.t.timeoutMs} ms.`);
      if (err.reason === "too_large")
        throw new GitLabError(`GitLab at ${this.baseUrl} answered ${what} with more than ${MAX_ANSWER_BYTES} bytes.`);
      throw new GitLabError(`GitLab at ${this.baseUrl} could not be reached (${err.code ?? "connection failed"}).`);
    }
    const body = parseJson(res.body);
    if (res.status >= 200 && res.status < 300) return { data: body as T, header: res.header };
    if (res.status === 404 && opts.allow404) return { data: null, header: res.header };
    if (res.status >= 300 && res.status < 400)
      throw new GitLabError(
        `GitLab answered ${what} with a redirect (${res.status}); set base_url to the instance's own address.`,
        res.status,
      );
    if (res.status === 401)
      throw new GitLabError(
        `GitLab refused the token (401 Unauthorized); check that it is valid and not expired.`,
        401,
      );
    if (res.status === 403)
      throw new GitLabError(
        `The token may not ${what} (403 Forbidden); it needs the api scope and a Maintainer role.`,
        403,
      );
    throw new GitLabError(`GitLab answered ${what} with ${statusText(res.status)}.`, res.status);
  }

  private async get<T>(path: string): Promise<T> {
    return (await this.call<T>("GET", path)).data as T;
  }

  /** GET /version → {version, revision} */
  async version(): Promise<{ version: string; revision?: string }> {
    const body = await this.get<unknown>("/version");
    return shaped(body, (b) => typeof b.version === "string", "GET /version", this.baseUrl);
  }

  /** GET /groups/:id with the URL-encoded full path; null when there is none the token sees */
  async group(path: string): Promise<GitLabGroup | null> {
    const { data } = await this.call<unknown>("GET", `/groups/${enc(path)}?with_projects=false`, { allow404: true });
    if (data === null) return null;
    const isGroup = (b: Record<string, unknown>) =>
      typeof b.id === "number" && typeof b.name === "string" && typeof b.web_url === "string";
    return shaped<GitLabGroup>(data, isGroup, "GET /groups/:id", this.baseUrl);
  }

  /** GET /projects/:id with the URL-encoded full path; null when there is none */
  async project(path: string): Promise<GitLabProject | null> {
    return (await this.call<GitLabProject>("GET", `/projects/${enc(path)}`, { allow404: true })).data;
  }

  /** POST /projects {name, path, namespace_id} */
  async createProject(p: { name: string; path: string; namespace_id: number; description?: string }) {
    return (await this.call<GitLabProject>("POST", "/projects", { body: { ...p, visibility: "private" } })).data!;
  }

  /** GET /projects/:id/repository/tree?recursive=true, every page (offset pagination, X-Next-Page); [] for an empty repository */
  async tree(projectId: number, ref: string): Promise<TreeEntry[]> {
    const out: TreeEntry[] = [];
    for (let page = "1"; page;) {
      const q = `ref=${enc(ref)}&recursive=true&per_page=100&page=${page}`;
      const { data, header } = await this.call<TreeEntry[]>("GET", `/projects/${projectId}/repository/tree?${q}`, {
        allow404: true,
      });
      if (!data) break;
      if (!Array.isArray(data)) throw new GitLabError(`${this.baseUrl} answered a tree page that is not a list.`);
      out.push(...data);
      page = header("x-next-page") ?? "";
    }
    return out;
  }

  /** GET /projects/:id/repository/files/:file_path?ref= → {content (base64), last_commit_id, ...}; null when absent */
  async file(projectId: number, filePath: string, ref: string): Promise<GitLabFile | null> {
    const path = `/projects/${projectId}/repository/files/${enc(filePath)}?ref=${enc(ref)}`;
    return (await this.call<GitLabFile>("GET", path, { allow404: true })).data;
  }

  /** POST /projects/:id/repository/commits {branch, commit_message, actions} → the commit ({id, ...}) */
  async commit(projectId: number, c: { branch: string; commit_message: string; actions: CommitAction[] }) {
    return (await this.call<{ id: string }>("POST", `/projects/${projectId}/repository/commits`, { body: c })).data!;
  }
}
