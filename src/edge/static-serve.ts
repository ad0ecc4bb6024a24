import type { IncomingMessage, ServerResponse, OutgoingHttpHeaders } from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../store/db.js";
import type { StaticFileEntry, StaticFiles } from "../static/contract.js";
import type { StaticSiteTarget } from "../kernel/area.js";
import { pages, sendPage, type EdgePage } from "./pages.js";
import { ByteLru, LoadingLru } from "./static-cache.js";

export interface StaticServeOptions {
  /** EDGE_STATIC_CACHE_MB: file contents (and their compressed variants) kept in memory */
  cacheBytes: number;
  log: FastifyBaseLogger;
}

type Encoding = "br" | "gzip";
type Manifest = Map<string, StaticFileEntry>;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
/** worth compressing: text and text-like formats over 1 KiB */
const COMPRESSIBLE =
  /^(text\/|image\/svg\+xml|font\/(ttf|otf)|application\/(javascript|x-javascript|json|xml|wasm|manifest\+json|ld\+json|rss\+xml|atom\+xml|vnd\.ms-fontobject))|\+(json|xml)(;|$)/;
const MIN_COMPRESS_BYTES = 1024;
const MANIFESTS = 512;
/** prepared answers kept per site target (request paths × encodings); beyond this a site's answers are built each time */
const ANSWERS_PER_SITE = 1024;
/** distinct Accept-Encoding values whose choice is remembered */
const ENCODING_CHOICES = 256;

/** One answer of a site, headers included, ready to be sent as it is (the hot path builds nothing). */
interface Prepared {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
  /** the content's hash (If-None-Match compares against it); null: never 304 (a 404 page) */
  hash: string | null;
  /** the 304 answer's headers */
  notModified: OutgoingHttpHeaders | null;
}

const methodNotAllowed: EdgePage = {
  status: 405,
  title: "Method not allowed",
  message: "A static site answers GET and HEAD only.",
  headers: { allow: "GET, HEAD" },
};
const nothingDeployed: EdgePage = {
  status: 503,
  title: "Nothing deployed yet",
  message: "This site has no finalized deployment yet; try again later.",
  headers: { "retry-after": "5" },
};
const noFile: EdgePage = { status: 404, title: "Not found", message: "This site has no page at this address." };

/**
 * The edge's answers for static sites: a request path → a file of the live deployment (index.html for folders,
 * `.html` and `/index.html` tried for extensionless paths, the SPA fallback, the site's 404 page), with strong
 * ETags from the content hash, 304 on If-None-Match, and brotli or gzip for compressible types. Manifests are
 * cached per deployment and contents per hash (bounded LRU), so a hot file never reaches the store.
 */
export class StaticServe {
  private readonly manifests = new LoadingLru<Manifest>(MANIFESTS);
  private readonly bytes: ByteLru;
  private readonly loading = new Map<string, Promise<Buffer | null>>();
  /**
   * Prepared answers per site target, by encoding and request URL. Keyed by the route's own object: a route
   * reloaded (NOTIFY or TTL, a few seconds at most) is a new object, so a rollback or a changed SPA or 404 setting is
   * never answered from here, and a site's answers go with the route that named them.
   */
  private readonly answers = new WeakMap<StaticSiteTarget, Map<string, Prepared>>();
  private readonly encodings = new Map<string, Encoding | null>();

  constructor(
    private readonly files: StaticFiles,
    private readonly db: Queryable,
    private readonly opts: StaticServeOptions,
  ) {
    this.bytes = new ByteLru(opts.cacheBytes);
  }

  /** Answers one request for a site; never throws (a store failure is the edge's 503 page). */
  serve(req: IncomingMessage, res: ServerResponse, site: StaticSiteTarget): void {
    if (req.method === "GET" || req.method === "HEAD") {
      const prepared = this.answers.get(site)?.get(this.answerKey(req));
      if (prepared) return send(req, res, prepared);
    }
    this.answer(req, res, site).catch((err) => {
      this.opts.log.error({ err }, "edge static file failed");
      sendPage(res, pages.storeDown(), req.method);
    });
  }

  private async answer(req: IncomingMessage, res: ServerResponse, site: StaticSiteTarget): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") return sendPage(res, methodNotAllowed, req.method);
    if (!site.deploymentId) return sendPage(res, nothingDeployed, req.method);
    const deploymentId = site.deploymentId;
    // an unknown deployment (pruned while a route was cached) is not kept: its next answer asks again
    const manifest = await this.manifests.get(
      deploymentId,
      () => this.files.manifest(this.db, deploymentId),
      (m) => m.size > 0,
    );
    const path = requestPath(req.url ?? "/");
    const found = path === null ? null : lookup(manifest, path, site);
    if (!found) return sendPage(res, noFile, req.method);
    const { entry, status } = found;
    const content = await this.content(entry.hash);
    if (!content) {
      this.opts.log.warn({ hash: entry.hash, deploymentId }, "edge static content missing from the store");
      return sendPage(res, pages.storeDown(), req.method);
    }
    const html = entry.contentType.startsWith("text/html");
    // a file too large to keep compressed in memory is sent as it is rather than compressed on every request
    const shrinks = compressible(entry.contentType, content.length, this.bytes.maxBytes);
    const encoding = shrinks ? this.encodingOf(req.headers["accept-encoding"]) : null;
    const headers: OutgoingHttpHeaders = {
      "content-type": entry.contentType,
      "cache-control": html || status !== 200 ? "no-cache" : "public, max-age=0, must-revalidate",
      "x-content-type-options": "nosniff",
    };
    if (shrinks) headers.vary = "Accept-Encoding";
    let body = content;
    if (encoding) {
      const packed = await this.variant(entry.hash, content, encoding);
      if (packed.length < content.length) {
        body = packed;
        headers["content-encoding"] = encoding;
      }
    }
    let notModifiedHeaders: OutgoingHttpHeaders | null = null;
    if (status === 200) {
      const etag = `"${entry.hash}${headers["content-encoding"] ? `-${headers["content-encoding"]}` : ""}"`;
      headers.etag = etag;
      notModifiedHeaders = {
        etag,
        "cache-control": headers["cache-control"],
        ...(shrinks && { vary: headers.vary }),
      };
    }
    headers["content-length"] = body.length;
    const prepared: Prepared = {
      status,
      headers,
      body,
      hash: status === 200 ? entry.hash : null,
      notModified: notModifiedHeaders,
    };
    this.keep(req, site, prepared);
    send(req, res, prepared);
  }

  /** the prepared answers' key: the encoding this client gets and the request's URL as sent */
  private answerKey(req: IncomingMessage): string {
    const encoding = this.encodingOf(req.headers["accept-encoding"]);
    return `${encoding ?? ""} ${req.url ?? "/"}`;
  }

  private keep(req: IncomingMessage, site: StaticSiteTarget, prepared: Prepared): void {
    let answers = this.answers.get(site);
    if (!answers) this.answers.set(site, (answers = new Map()));
    if (answers.size < ANSWERS_PER_SITE) answers.set(this.answerKey(req), prepared);
  }

  /** chooseEncoding, remembered per header value (clients send a handful of distinct ones) */
  private encodingOf(header: string | string[] | undefined): Encoding | null {
    if (header === undefined) return null;
    const key = String(header);
    let choice = this.encodings.get(key);
    if (choice === undefined) {
      choice = chooseEncoding(key);
      if (this.encodings.size >= ENCODING_CHOICES) this.encodings.clear();
      this.encodings.set(key, choice);
    }
    return choice;
  }

  /** the bytes a hash names: from memory, else from the store (concurrent misses share one read); nginx's too */
  async content(hash: string): Promise<Buffer | null> {
    const cached = this.bytes.get(hash);
    if (cached) return cached;
    let pending = this.loading.get(hash);
    if (!pending) {
      pending = this.files.content(this.db, hash).finally(() => this.loading.delete(hash));
      this.loading.set(hash, pending);
    }
    const loaded = await pending;
    if (loaded) this.bytes.set(hash, loaded);
    return loaded;
  }

  /** a compressed variant, made once and kept beside the original */
  private async variant(hash: string, content: Buffer, encoding: Encoding): Promise<Buffer> {
    const key = `${hash}.${encoding}`;
    const cached = this.bytes.get(key);
    if (cached) return cached;
    let pending = this.loading.get(key) as Promise<Buffer> | undefined;
    if (!pending) {
      pending = (encoding === "br" ? compressBrotli(content) : compressGzip(content)).finally(() =>
        this.loading.delete(key),
      );
      this.loading.set(key, pending);
    }
    const packed = await pending;
    this.bytes.set(key, packed);
    return packed;
  }
}

/** A prepared answer: 304 when If-None-Match names its content, the headers only for HEAD. */
function send(req: IncomingMessage, res: ServerResponse, a: Prepared): void {
  const inm = req.headers["if-none-match"];
  if (inm !== undefined && a.notModified && notModified(inm, a.hash!)) {
    res.writeHead(304, a.notModified);
    return void res.end();
  }
  res.writeHead(a.status, a.headers);
  res.end(req.method === "HEAD" ? undefined : a.body);
}

/**
 * Whether a file is compressed: a text-like type over 1 KiB, and no more than a quarter of the cache (a larger one
 * is sent as it is rather than compressed on every request). nginx's materialised variants follow the same rule.
 */
export function compressible(contentType: string, size: number, cacheBytes: number): boolean {
  return COMPRESSIBLE.test(contentType) && size > MIN_COMPRESS_BYTES && size <= cacheBytes / 4;
}

/** best compression for small files, a faster level for large ones */
export function compressBrotli(content: Buffer): Promise<Buffer> {
  return brotli(content, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: content.length <= 512 * 1024 ? 11 : 6,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: content.length,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    },
  });
}

export function compressGzip(content: Buffer): Promise<Buffer> {
  return gzip(content, { level: content.length <= 512 * 1024 ? 9 : 6 });
}

/** The site path a request asks for ("" for the root, "about", "assets/app.js", "docs/"), or null. */
export function requestPath(url: string): string | null {
  let pathname: string;
  try {
    // origin-form "/a/b?q" (dot segments resolved by URL); absolute-form "http://host/a" as a proxy would send
    pathname = new URL(url.startsWith("/") ? `http://site${url}` : url).pathname;
    return decodeURIComponent(pathname).replace(/^\/+/, "");
  } catch {
    return null;
  }
}

/**
 * The file for a path: exact, `<path>.html`, `<path>/index.html`; folders answer their index.html. Unknown
 * paths without an extension answer index.html on SPA sites; others the site's 404 page (status 404) if set.
 */
export function lookup(
  manifest: Manifest,
  path: string,
  site: Pick<StaticSiteTarget, "spa" | "notFoundPage">,
): { entry: StaticFileEntry; status: 200 | 404 } | null {
  const candidates =
    path === "" || path.endsWith("/") ? [`${path}index.html`] : [path, `${path}.html`, `${path}/index.html`];
  for (const c of candidates) {
    const entry = manifest.get(c);
    if (entry) return { entry, status: 200 };
  }
  const last = path.split("/").pop() ?? "";
  if (site.spa && !last.includes(".")) {
    const index = manifest.get("index.html");
    if (index) return { entry: index, status: 200 };
  }
  const page = site.notFoundPage ? manifest.get(site.notFoundPage) : undefined;
  return page ? { entry: page, status: 404 } : null;
}

/** br when the client takes it (and does not prefer gzip), else gzip when it takes that; q=0 refuses. */
export function chooseEncoding(header: string | string[] | undefined): Encoding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const part of String(header).split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const value = qp ? Number(qp.slice(2)) : 1;
    q.set(name === "x-gzip" ? "gzip" : name, Number.isFinite(value) ? value : 0);
  }
  const br = q.get("br") ?? 0;
  const gz = q.get("gzip") ?? 0;
  if (br > 0 && br >= gz) return "br";
  if (gz > 0) return "gzip";
  return br > 0 ? "br" : null;
}

/** If-None-Match against a content hash: any of its representations' tags (weak or strong), or `*`. */
function notModified(header: string | undefined, hash: string): boolean {
  if (!header) return false;
  return header.split(",").some((raw) => {
    const tag = raw.trim().replace(/^W\//, "");
    if (tag === "*") return true;
    return tag.replace(/^"|"$/g, "").replace(/-(br|gzip)$/, "") === hash;
  });
}
