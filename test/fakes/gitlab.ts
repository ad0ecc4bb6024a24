/**
 * A local GitLab (REST API v4) with exactly the endpoints the platform's integration calls, in their documented
 * shapes: GET /version, GET /groups/:id, GET and POST /projects[/:id], GET /projects/:id/repository/tree (offset
 * pagination with X-Next-Page), GET /projects/:id/repository/files/:file_path?ref=, POST
 * /projects/:id/repository/commits with create/update/delete actions (text or base64). Every request needs the
 * token in PRIVATE-TOKEN (401 otherwise). Projects hold one branch, main, in memory. `failing` makes every request
 * answer 500; `userCommit` is someone committing in the repository.
 *
 * For preview environments (src/previews): GET /projects/:id/repository/archive[.tar.gz]?sha= (a tar.gz of the
 * commit's files under `<path>-<sha>-<sha>/`, after git's pax global header, as GitLab answers it) and POST
 * /projects/:id/merge_requests/:iid/notes {body} (kept in `notes`). `branchCommit` is someone pushing files to a
 * merge request's branch (every commit's files are kept, so any sha can be archived).
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

export interface FakeFile {
  content: Buffer;
  lastCommit: string;
  /** the file's mode in archives (0644 unless given) */
  mode?: number;
}

export interface FakeNote {
  iid: number;
  body: string;
}

export interface FakeCommit {
  id: string;
  message: string;
  actions: { action: string; file_path: string }[];
}

export interface FakeProject {
  id: number;
  name: string;
  path: string;
  namespaceId: number;
  fullPath: string;
  files: Map<string, FakeFile>;
  commits: FakeCommit[];
  /** every commit's files, by sha (archives) */
  snapshots: Map<string, Map<string, FakeFile>>;
  notes: FakeNote[];
}

interface Group {
  id: number;
  name: string;
  path: string;
  full_path: string;
}

/** A ustar header; a name beyond 100 bytes is split into the prefix field at a slash (GitLab's top folder is long). */
function tarHeader(path: string, size: number, type: string, mode: number): Buffer {
  const h = Buffer.alloc(512);
  const put = (text: string, at: number, len: number) => h.write(text, at, len, "utf8");
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0") + "\0";
  const cut = path.length > 100 ? path.lastIndexOf("/", path.length - 2) : -1;
  put(cut > 0 ? path.slice(cut + 1) : path, 0, 100);
  if (cut > 0) put(path.slice(0, cut), 345, 155);
  put(octal(mode, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(0, 12), 136, 12);
  h.fill(" ", 148, 156);
  put(type, 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/** `git archive`'s tar.gz: a pax global header with the commit id, then the files under one top folder. */
function archive(top: string, sha: string, files: Map<string, FakeFile>): Buffer {
  const parts: Buffer[] = [];
  const add = (name: string, content: Buffer, type: string, mode: number) =>
    parts.push(
      tarHeader(name, content.length, type, mode),
      content,
      Buffer.alloc((512 - (content.length % 512)) % 512),
    );
  const record = `52 comment=${sha}\n`;
  add("pax_global_header", Buffer.from(record), "g", 0o666);
  add(`${top}/`, Buffer.alloc(0), "5", 0o755);
  const dirs = new Set<string>();
  for (const [path, f] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const segs = path.split("/");
    for (let i = 1; i < segs.length; i++) {
      const d = segs.slice(0, i).join("/");
      if (!dirs.has(d)) add(`${top}/${d}/`, Buffer.alloc(0), "5", 0o755);
      dirs.add(d);
    }
    add(`${top}/${path}`, f.content, "0", f.mode ?? 0o644);
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

const blobId = (b: Buffer) => createHash("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");
const newSha = () => randomBytes(20).toString("hex");

export interface FakeGitlab {
  url: string;
  token: string;
  groups: Group[];
  projects: Map<number, FakeProject>;
  requests: { method: string; path: string; token: string | undefined }[];
  failing: boolean;
  project(fullPath: string): FakeProject | undefined;
  userCommit(fullPath: string, filePath: string, content: string): string;
  /** a project made directly in the first group (no API call), for tests that only need one */
  addProject(name: string): FakeProject;
  /** a commit of these files (the whole tree) on a branch other than main; answers its sha */
  branchCommit(fullPath: string, files: Record<string, { content: Buffer | string; mode?: number }>): string;
  close(): Promise<void>;
}

export async function startFakeGitlab(opts: { token: string; groups: { name: string; path: string }[] }) {
  let nextId = 100;
  const groups: Group[] = opts.groups.map((g) => ({
    id: nextId++,
    name: g.name,
    path: g.path.split("/").pop()!,
    full_path: g.path,
  }));
  const projects = new Map<number, FakeProject>();
  const fake = {} as FakeGitlab;

  const webUrl = (p: string) => `${fake.url}/${p}`;
  const projectJson = (p: FakeProject) => ({
    id: p.id,
    name: p.name,
    path: p.path,
    path_with_namespace: p.fullPath,
    namespace: { id: p.namespaceId, full_path: p.fullPath.slice(0, p.fullPath.lastIndexOf("/")) },
    default_branch: p.commits.length ? "main" : null,
    empty_repo: p.commits.length === 0,
    visibility: "private",
    web_url: webUrl(p.fullPath),
  });
  const groupJson = (g: Group) => ({
    id: g.id,
    name: g.name,
    path: g.path,
    full_path: g.full_path,
    web_url: webUrl(`groups/${g.full_path}`),
  });
  const findProject = (ref: string) => {
    const id = /^\d+$/.test(ref) ? Number(ref) : null;
    return [...projects.values()].find((p) =>
      id !== null ? p.id === id : p.fullPath.toLowerCase() === ref.toLowerCase(),
    );
  };

  function commit(
    p: FakeProject,
    message: string,
    actions: { action: string; file_path: string; content?: string; encoding?: string }[],
  ) {
    for (const a of actions) {
      const exists = p.files.has(a.file_path);
      if (a.action === "create" && exists)
        return { status: 400, body: { message: "A file with this name already exists" } };
      if ((a.action === "update" || a.action === "delete") && !exists)
        return { status: 400, body: { message: "A file with this name doesn't exist" } };
      if (!["create", "update", "delete"].includes(a.action))
        return { status: 400, body: { error: "actions[0][action] does not have a valid value" } };
      if (a.encoding !== undefined && a.encoding !== "text" && a.encoding !== "base64")
        return { status: 400, body: { error: "actions[0][encoding] does not have a valid value" } };
    }
    const id = newSha();
    for (const a of actions) {
      if (a.action === "delete") p.files.delete(a.file_path);
      else {
        const content = a.encoding === "base64" ? Buffer.from(a.content ?? "", "base64") : Buffer.from(a.content ?? "");
        p.files.set(a.file_path, { content, lastCommit: id });
      }
    }
    p.commits.push({ id, message, actions: actions.map((a) => ({ action: a.action, file_path: a.file_path })) });
    p.snapshots.set(id, new Map(p.files));
    return {
      status: 201,
      body: {
        id,
        short_id: id.slice(0, 8),
        title: message.split("\n")[0],
        message,
        parent_ids: [],
        web_url: webUrl(`${p.fullPath}/-/commit/${id}`),
      },
    };
  }

  function tree(p: FakeProject, q: URLSearchParams) {
    if (!p.commits.length || (q.get("ref") ?? "main") !== "main")
      return { status: 404, body: { message: "404 Tree Not Found" } };
    const entries: { id: string; name: string; type: string; path: string; mode: string }[] = [];
    const dirs = new Set<string>();
    for (const [path, f] of [...p.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
      entries.push({ id: blobId(f.content), name: parts.at(-1)!, type: "blob", path, mode: "100644" });
    }
    for (const d of dirs)
      entries.push({ id: newSha(), name: d.split("/").pop()!, type: "tree", path: d, mode: "040000" });
    const perPage = Number(q.get("per_page") ?? 20);
    const page = Number(q.get("page") ?? 1);
    const pages = Math.max(1, Math.ceil(entries.length / perPage));
    const headers = {
      "x-page": String(page),
      "x-per-page": String(perPage),
      "x-total": String(entries.length),
      "x-total-pages": String(pages),
      "x-next-page": page < pages ? String(page + 1) : "",
    };
    return { status: 200, body: entries.slice((page - 1) * perPage, page * perPage), headers };
  }

  function route(
    method: string,
    path: string,
    q: URLSearchParams,
    body: any,
  ): { status: number; body: unknown; headers?: Record<string, string> } {
    if (method === "GET" && path === "/version")
      return { status: 200, body: { version: "17.5.1-ee", revision: "1a2b3c4d" } };
    let m = /^\/groups\/([^/]+)$/.exec(path);
    if (m && method === "GET") {
      const ref = decodeURIComponent(m[1]);
      const g = groups.find((x) => String(x.id) === ref || x.full_path.toLowerCase() === ref.toLowerCase());
      return g ? { status: 200, body: groupJson(g) } : { status: 404, body: { message: "404 Group Not Found" } };
    }
    if (path === "/projects" && method === "POST") {
      const g = groups.find((x) => x.id === body?.namespace_id);
      if (!g || !body?.name) return { status: 400, body: { message: "namespace is missing or name is empty" } };
      const p = body.path ?? body.name;
      const fullPath = `${g.full_path}/${p}`;
      if (findProject(fullPath)) return { status: 400, body: { message: { path: ["has already been taken"] } } };
      const project: FakeProject = {
        id: nextId++,
        name: body.name,
        path: p,
        namespaceId: g.id,
        fullPath,
        files: new Map(),
        commits: [],
        snapshots: new Map(),
        notes: [],
      };
      projects.set(project.id, project);
      return { status: 201, body: projectJson(project) };
    }
    m = /^\/projects\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return { status: 404, body: { error: "404 Not Found" } };
    const p = findProject(decodeURIComponent(m[1]));
    if (!p) return { status: 404, body: { message: "404 Project Not Found" } };
    const rest = m[2] ?? "";
    if (rest === "" && method === "GET") return { status: 200, body: projectJson(p) };
    if (rest === "/repository/tree" && method === "GET") return tree(p, q);
    if (/^\/repository\/archive(\.tar\.gz)?$/.test(rest) && method === "GET") {
      const sha = q.get("sha") ?? p.commits.at(-1)?.id ?? "";
      const files = p.snapshots.get(sha);
      if (!files) return { status: 404, body: { message: "404 File Not Found" } };
      return {
        status: 200,
        body: archive(`${p.path}-${sha}-${sha}`, sha, files),
        headers: { "content-type": "application/x-gzip" },
      };
    }
    m = /^\/merge_requests\/(\d+)\/notes$/.exec(rest);
    if (m && method === "POST") {
      if (typeof body?.body !== "string" || !body.body) return { status: 400, body: { error: "body is missing" } };
      const note = { iid: Number(m[1]), body: body.body as string };
      p.notes.push(note);
      return {
        status: 201,
        body: { id: p.notes.length, body: note.body, noteable_type: "MergeRequest", noteable_iid: note.iid },
      };
    }
    if (rest === "/repository/commits" && method === "POST") {
      if (body?.branch !== "main" || !body?.commit_message || !Array.isArray(body?.actions))
        return { status: 400, body: { error: "branch, commit_message or actions is missing" } };
      return commit(p, body.commit_message, body.actions);
    }
    m = /^\/repository\/files\/([^/]+)$/.exec(rest);
    if (m && method === "GET") {
      if (!q.get("ref")) return { status: 400, body: { error: "ref is missing" } };
      const filePath = decodeURIComponent(m[1]);
      const f = q.get("ref") === "main" ? p.files.get(filePath) : undefined;
      if (!f) return { status: 404, body: { message: "404 File Not Found" } };
      return {
        status: 200,
        body: {
          file_name: filePath.split("/").pop(),
          file_path: filePath,
          size: f.content.length,
          encoding: "base64",
          content: f.content.toString("base64"),
          content_sha256: createHash("sha256").update(f.content).digest("hex"),
          ref: "main",
          blob_id: blobId(f.content),
          commit_id: p.commits.at(-1)!.id,
          last_commit_id: f.lastCommit,
        },
      };
    }
    return { status: 404, body: { error: "404 Not Found" } };
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      // the raw path: %2F must stay encoded until a parameter is read
      const [rawPath, query = ""] = (req.url ?? "/").split("?");
      const token = req.headers["private-token"] as string | undefined;
      fake.requests.push({ method: req.method ?? "GET", path: req.url ?? "/", token });
      let out: { status: number; body: unknown; headers?: Record<string, string> };
      if (fake.failing) out = { status: 500, body: { message: "500 Internal Server Error" } };
      else if (!rawPath.startsWith("/api/v4/")) out = { status: 404, body: { error: "404 Not Found" } };
      else if (token !== opts.token) out = { status: 401, body: { message: "401 Unauthorized" } };
      else {
        let body: unknown;
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : null;
        } catch {
          body = undefined;
        }
        out =
          body === undefined
            ? { status: 400, body: { error: "body is not JSON" } }
            : route(req.method ?? "GET", rawPath.slice("/api/v4".length), new URLSearchParams(query), body);
      }
      const text = Buffer.isBuffer(out.body) ? out.body : Buffer.from(JSON.stringify(out.body));
      res.writeHead(out.status, {
        "content-type": "application/json",
        ...out.headers,
        "content-length": text.length,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token: opts.token,
    groups,
    projects,
    requests: [],
    failing: false,
    project: (fullPath: string) => findProject(fullPath),
    userCommit(fullPath: string, filePath: string, content: string) {
      const p = findProject(fullPath);
      if (!p) throw new Error(`no project ${fullPath}`);
      const out = commit(p, `edit ${filePath}`, [
        { action: p.files.has(filePath) ? "update" : "create", file_path: filePath, content },
      ]);
      return (out.body as { id: string }).id;
    },
    addProject(name: string) {
      const g = groups[0]!;
      const out = route("POST", "/projects", new URLSearchParams(), { name, path: name, namespace_id: g.id });
      return findProject((out.body as { path_with_namespace: string }).path_with_namespace)!;
    },
    branchCommit(fullPath: string, files: Record<string, { content: Buffer | string; mode?: number }>) {
      const p = findProject(fullPath);
      if (!p) throw new Error(`no project ${fullPath}`);
      const id = newSha();
      const tree = new Map<string, FakeFile>();
      for (const [path, f] of Object.entries(files))
        tree.set(path, { content: Buffer.from(f.content), lastCommit: id, mode: f.mode });
      p.snapshots.set(id, tree);
      return id;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return fake;
}
