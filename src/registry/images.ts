import { ApiError } from "../http/errors.js";

/**
 * Image references as distribution's reference grammar writes them:
 *   [domain[:port]/]path-component[/path-component...][:tag][@digest]
 * The first component is a domain when it holds a dot or a colon or is `localhost`; otherwise the
 * image is on Docker Hub. `localhost/...` is the host's local image store (podman's name for images
 * it built or loaded), not a registry.
 */
export interface ImageRef {
  /** lowercased; null: Docker Hub */
  domain: string | null;
  /** the repository path, e.g. `u-0a1b2c3d4e5f/web` */
  path: string;
  tag: string | null;
  digest: string | null;
}

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

function validDomain(domain: string): boolean {
  const bracketed = /^\[([0-9a-fA-F:]+)\](?::(\d{1,5}))?$/.exec(domain);
  if (bracketed) return true;
  const [host, port, ...rest] = domain.split(":");
  if (rest.length || (port !== undefined && !/^\d{1,5}$/.test(port))) return false;
  return host.split(".").every((c) => DOMAIN_COMPONENT.test(c));
}

/** Parses an image reference; null when it is not one. */
export function parseImage(image: string): ImageRef | null {
  if (!image || image.length > 512 || /\s/.test(image)) return null;
  let rest = image;
  let digest: string | null = null;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return null;
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return null;
  }
  let domain: string | null = null;
  const slash = rest.indexOf("/");
  const first = slash < 0 ? "" : rest.slice(0, slash);
  if (slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost" || first.startsWith("["))) {
    if (!validDomain(first)) return null;
    domain = first.toLowerCase();
    rest = rest.slice(slash + 1);
  }
  if (!rest || rest.length > 255 || !rest.split("/").every((c) => PATH_COMPONENT.test(c))) return null;
  return { domain, path: rest, tag, digest };
}

/** Loopback hosts: an image there would be pulled from this machine itself. */
export function isLoopback(domain: string): boolean {
  const host = domain.startsWith("[") ? domain.slice(1, domain.indexOf("]")) : domain.split(":")[0];
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The names a registry at `127.0.0.1:<port>` answers to in image references. */
export function addressAliases(address: string): string[] {
  const port = address.slice(address.lastIndexOf(":") + 1);
  return [address.toLowerCase(), `localhost:${port}`, `[::1]:${port}`];
}

export type ImageVerdict =
  | { kind: "public" }
  | { kind: "local" }
  | { kind: "ours"; ref: ImageRef }
  | { kind: "foreign_loopback"; ref: ImageRef };

/**
 * Where an image comes from: a public registry (pulled anonymously), the host's local store, this
 * platform's registry, or some other service on this host's loopback (refused: tenants must not make
 * the platform pull from ports of its own machine).
 */
export function classify(image: string, ourAddresses: string[]): ImageVerdict {
  const ref = parseImage(image);
  if (!ref) throw new ApiError("bad_image", `"${image.slice(0, 200)}" is not a valid image reference.`);
  if (ref.domain === null) return { kind: "public" };
  if (ref.domain === "localhost") return { kind: "local" };
  if (ourAddresses.flatMap(addressAliases).includes(ref.domain)) return { kind: "ours", ref };
  if (isLoopback(ref.domain)) return { kind: "foreign_loopback", ref };
  return { kind: "public" };
}
