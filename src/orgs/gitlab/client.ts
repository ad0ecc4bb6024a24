/**
 * The GitLab REST API (v4) calls the integration makes, with the documented request and answer shapes. Every call
 * carries the token in `PRIVATE-TOKEN`, is bounded by a timeout and never follows a redirect (the token would go
 * along). Failures are GitLabError with a sentence for people (status and GitLab's own message, never its body).
 */

export class GitLabError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export interface GitLabTarget {
  baseUrl: string;
  token: string;
  timeoutMs: number;
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

/** `https://gitlab.example.com/` and `.../api/v4` both name the instance; only http(s). */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new GitLabError(`base_url ${JSON.stringify(raw)} is not a URL.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new GitLabError(`base_url must be an http or https URL, not ${url.protocol}.`);
  if (url.username || url.password || url.search || url.hash)
    throw new GitLabError("base_url must not carry credentials, a query or a fragment.");
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
const short = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

function gitlabMessage(body: unknown): string | null {
  if (!body || typeof body !== "object") return null;
  const b = body as { message?: unknown; error?: unknown };
  const m = b.message ?? b.error;
  if (typeof m === "string") return short(m);
  if (m && typeof m === "object") return short(JSON.stringify(m));
  return null;
}

export class GitLabClient {
  readonly baseUrl: string;

  constructor(private readonly t: GitLabTarget) {
    this.baseUrl = normalizeBaseUrl(t.baseUrl);
  }

  private async call<T>(
    method: string,
    path: string,
    opts: { body?: unknown; allow404?: boolean } = {},
  ): Promise<{ data: T | null; headers: Headers }> {
    const what = `${method} ${path.split("?")[0]}`;
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/api/v4${path}`, {
        method,
        redirect: "manual",
        headers: {
          "PRIVATE-TOKEN": this.t.token,
          accept: "application/json",
          ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
        },
        body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
        signal: AbortSignal.timeout(this.t.timeoutMs),
      });
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
      if (e.name === "TimeoutError" || e.name === "AbortError")
        throw new GitLabError(`GitLab at ${this.baseUrl} did not answer ${what} within ${this.t.timeoutMs} ms.`);
      const cause = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
      throw new GitLabError(`GitLab at ${this.baseUrl} could not be reached (${cause}).`);
    }
    const text = await res.text().catch(() => "");
    const body = parseJson(text);
    if (res.ok) return { data: body as T, headers: res.headers };
    if (res.status === 404 && opts.allow404) return { data: null, headers: res.headers };
    const said = gitlabMessage(body);
    const tail = said ? `: ${said}` : "";
    if (res.status >= 300 && res.status < 400)
      throw new GitLabError(
        `GitLab answered ${what} with a redirect (${res.status}) to ${res.headers.get("location") ?? "?"}; set base_url to the instance's own address.`,
        res.status,
      );
    if (res.status === 401)
      throw new GitLabError(
        `GitLab refused the token (401 Unauthorized${tail}); check that it is valid and not expired.`,
        401,
      );
    if (res.status === 403)
      throw new GitLabError(
        `The token may not ${what} (403 Forbidden${tail}); it needs the api scope and a Maintainer role.`,
        403,
      );
    throw new GitLabError(`GitLab answered ${what} with ${res.status}${tail}.`, res.status);
  }

  private async get<T>(path: string): Promise<T> {
    return (await this.call<T>("GET", path)).data as T;
  }

  /** GET /version → {version, revision} */
  async version(): Promise<{ version: string; revision?: string }> {
    return this.get("/version");
  }

  /** GET /groups/:id with the URL-encoded full path; null when there is none the token sees */
  async group(path: string): Promise<GitLabGroup | null> {
    return (await this.call<GitLabGroup>("GET", `/groups/${enc(path)}?with_projects=false`, { allow404: true })).data;
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
      const { data, headers } = await this.call<TreeEntry[]>("GET", `/projects/${projectId}/repository/tree?${q}`, {
        allow404: true,
      });
      if (!data) break;
      out.push(...data);
      page = headers.get("x-next-page") ?? "";
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
