import { createHash } from "node:crypto";
import { OutboundError, type Outbound } from "../net/outbound.js";

/**
 * The manifest digest a registry names for an image now (distribution's HTTP API v2, `HEAD /v2/<name>/manifests/
 * <reference>` with the manifest and index media types), for base-image refresh (issue 14): builds record it for
 * each base image just before pulling it, and organizations compare it later. Authentication follows the Docker
 * token protocol: a 401 with a Bearer challenge sends the client to the realm (with HTTP Basic credentials when it
 * has some: the platform's own registry; anonymous for public ones), whose token is sent back; a Basic challenge
 * gets the credentials directly. The platform's loopback registry speaks plain HTTP, every other one HTTPS.
 * Image names and token realms come from users' Dockerfiles and from registries, so every registry but the
 * platform's own (loopback; the owner's pull access was checked before, and other loopback registries refused)
 * is asked through the guarded outbound client (src/net/outbound.ts): no internal addresses, bounded answers.
 */

const ACCEPT = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

const TIMEOUT_MS = 15_000;
/** a manifest or image index is kilobytes; a token answer less */
const MAX_BYTES = 4 * 1024 * 1024;

export interface RegistryImage {
  /** host[:port] of the registry's API */
  host: string;
  repository: string;
  /** tag or digest */
  reference: string;
  plainHttp: boolean;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/;

/** Where an image's manifest lives; null for the host's local store (`localhost/…`), which is no registry. */
export function registryImage(image: string): RegistryImage | null {
  let rest = image;
  let reference = "latest";
  const at = rest.indexOf("@");
  if (at >= 0) {
    reference = rest.slice(at + 1);
    rest = rest.slice(0, at);
  } else {
    const colon = rest.lastIndexOf(":");
    if (colon > rest.lastIndexOf("/")) {
      reference = rest.slice(colon + 1);
      rest = rest.slice(0, colon);
    }
  }
  const slash = rest.indexOf("/");
  const first = slash < 0 ? "" : rest.slice(0, slash);
  const hasDomain = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost");
  if (first === "localhost") return null;
  let host = hasDomain ? first : "docker.io";
  let repository = hasDomain ? rest.slice(slash + 1) : rest;
  if (host === "docker.io" || host === "index.docker.io") {
    host = "registry-1.docker.io";
    if (!repository.includes("/")) repository = `library/${repository}`;
  }
  return { host, repository, reference, plainHttp: LOOPBACK.test(host) };
}

/** `Bearer realm="…",service="…",scope="…"` → scheme and parameters. */
function challenge(header: string | null): { scheme: string; params: Record<string, string> } | null {
  const m = /^\s*(\w+)\s*(.*)$/.exec(header ?? "");
  if (!m) return null;
  const params: Record<string, string> = {};
  for (const p of m[2].matchAll(/(\w+)="([^"]*)"/g)) params[p[1].toLowerCase()] = p[2];
  return { scheme: m[1].toLowerCase(), params };
}

const basic = (c: { username: string; password: string }) =>
  `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;

/**
 * The image's current manifest digest (`sha256:…`). An image pinned by digest answers that digest. Throws an Error
 * saying why when the registry cannot be asked or refuses.
 */
export async function manifestDigest(
  image: string,
  creds: { username: string; password: string } | null,
  outbound: Outbound,
): Promise<string | null> {
  const ref = registryImage(image);
  if (!ref) return null;
  if (ref.reference.startsWith("sha256:")) return ref.reference;
  const own = ref.plainHttp;
  const url = `${own ? "http" : "https"}://${ref.host}/v2/${ref.repository}/manifests/${ref.reference}`;
  const get = async (target: string, method: "HEAD" | "GET", headers: Record<string, string>) => {
    // the platform's own registry and the realm it names (the API on loopback): the platform's own addresses
    if (own) {
      const res = await fetch(target, { method, headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const bytes = method === "GET" ? Buffer.from(await res.arrayBuffer()) : Buffer.alloc(0);
      return { status: res.status, header: (n: string) => res.headers.get(n), bytes };
    }
    try {
      return await outbound.request(target, { method, headers, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES });
    } catch (err) {
      if (err instanceof OutboundError) throw new Error(err.message, { cause: err });
      throw err;
    }
  };
  const ask = (method: "HEAD" | "GET", authorization?: string) =>
    get(url, method, { accept: ACCEPT, ...(authorization ? { authorization } : {}) });
  let authorization: string | undefined;
  let res = await ask("HEAD");
  if (res.status === 401) {
    const c = challenge(res.header("www-authenticate"));
    if (c?.scheme === "bearer" && c.params.realm) {
      const realm = new URL(c.params.realm);
      if (c.params.service) realm.searchParams.set("service", c.params.service);
      realm.searchParams.set("scope", `repository:${ref.repository}:pull`);
      // the platform's own registry names its own realm; credentials never go to another registry's realm
      const tokenRes = await get(realm.toString(), "GET", creds && own ? { authorization: basic(creds) } : {});
      if (tokenRes.status < 200 || tokenRes.status >= 300)
        throw new Error(`the registry's token service refused: HTTP ${tokenRes.status}`);
      let body: { token?: string; access_token?: string } = {};
      try {
        body = JSON.parse(tokenRes.bytes.toString("utf8")) as typeof body;
      } catch {
        // no JSON: no token
      }
      const token = body.token ?? body.access_token;
      if (!token) throw new Error("the registry's token service gave no token");
      authorization = `Bearer ${token}`;
    } else if (c?.scheme === "basic" && creds) authorization = basic(creds);
    if (authorization) res = await ask("HEAD", authorization);
  }
  const ok = (status: number) => status >= 200 && status < 300;
  if (!ok(res.status))
    throw new Error(`${ref.host} answered HTTP ${res.status} for ${ref.repository}:${ref.reference}`);
  const digest = res.header("docker-content-digest");
  if (digest) return digest;
  // registries without the header: the digest of the manifest's bytes
  const full = await ask("GET", authorization);
  if (!ok(full.status))
    throw new Error(`${ref.host} answered HTTP ${full.status} for ${ref.repository}:${ref.reference}`);
  return `sha256:${createHash("sha256").update(full.bytes).digest("hex")}`;
}
