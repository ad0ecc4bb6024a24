import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { CSRF_COOKIE, SESSION_COOKIE } from "../http/session-cookie.js";

/** The platform's own cookies: they authenticate to the platform and never reach an app, nor come from one. */
/**
 * The edge's binding of a suite sign-in to the browser that started it on a site's host (suite-sign-in.ts); an
 * app setting it (even for a parent domain) could bind a visitor to a sign-in of its own choosing.
 */
export const SUITE_BINDING_COOKIE = "platform_suite_binding";
const PLATFORM_COOKIES = new Set([SESSION_COOKIE, CSRF_COOKIE, SUITE_BINDING_COOKIE]);

/** One cookie's value from a Cookie header (the first of that name), URI-decoded when it can be. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 1 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return null;
}

/** The Cookie header without the platform's cookies (undefined when nothing is left). */
export function withoutPlatformCookies(header: string | undefined): string | undefined {
  if (!header || !header.includes("platform_")) return header;
  const kept = header
    .split(";")
    .filter((part) => !PLATFORM_COOKIES.has(part.slice(0, Math.max(0, part.indexOf("="))).trim()))
    .map((part) => part.trim())
    .filter(Boolean);
  return kept.length ? kept.join("; ") : undefined;
}

/** Set-Cookie values an app may send: none that would set or shadow the platform's session (login CSRF). */
export function appSetCookies(values: string[] | undefined): string[] | undefined {
  if (!values) return values;
  return values.filter((v) => !PLATFORM_COOKIES.has(v.slice(0, Math.max(0, v.indexOf("="))).trim()));
}

/** What nginx (the data plane in front, README "The nginx data plane") said of the visitor, trusted with its secret. */
export interface ForwardedVisitor {
  /** nginx's secret, when nginx forwarded the request (it then counts the answer: `NGINX_TARGET_HEADER`) */
  secret?: string;
  address: string;
  https: boolean;
  port: string;
}

const FORWARDED_BY_NGINX = Symbol("edge forwarded by nginx");
type Forwarded = IncomingMessage & { [FORWARDED_BY_NGINX]?: ForwardedVisitor };

/**
 * A request on the Node edge's loopback listener behind nginx: with nginx's secret, its forwarding headers name
 * the visitor (kept on the request); without it, they are a client's and replaced as on any listener.
 */
export function takeForwarded(req: IncomingMessage, secret: string): void {
  const h = req.headers;
  if (h["x-platform-edge"] !== secret) {
    delete h["x-platform-edge-failed"];
    return;
  }
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";
  (req as Forwarded)[FORWARDED_BY_NGINX] = {
    secret,
    address: first(h["x-forwarded-for"]),
    https: first(h["x-forwarded-proto"]) === "https",
    port: first(h["x-forwarded-port"]),
  };
  delete h["x-platform-edge"];
}

/**
 * The answer header naming the app to nginx, which counts the statistics of every answer it sends (the bytes the
 * visitor got are nginx's, not this edge's): "<secret> <kind>:<id>", removed by nginx. The secret keeps an app's
 * own header of that name from charging its requests to another app.
 */
export const NGINX_TARGET_HEADER = "x-platform-edge-target";

/** nginx's secret when nginx forwarded this request (its answer is counted there), else undefined */
export function nginxSecretOf(req: IncomingMessage): string | undefined {
  return (req as Forwarded)[FORWARDED_BY_NGINX]?.secret;
}

/** The visitor's address, scheme and the port it connected to: nginx's word when it forwarded the request. */
export function visitorOf(req: IncomingMessage): ForwardedVisitor {
  const forwarded = (req as Forwarded)[FORWARDED_BY_NGINX];
  if (forwarded) return forwarded;
  const remote = req.socket.remoteAddress ?? "";
  return {
    address: remote.startsWith("::ffff:") ? remote.slice(7) : remote,
    https: (req.socket as TLSSocket).encrypted === true,
    port: String(req.socket.localPort ?? ""),
  };
}

const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "proxy-authorization", "upgrade"];

/**
 * Prepares the request headers for an upstream: the edge is the front door, so forwarding headers a client
 * sent are replaced, never extended (X-Forwarded-For/Proto/Host/Port); hop-by-hop headers stay on this hop
 * (except the upgrade handshake's); the platform's cookies are removed.
 */
export function prepareUpstreamHeaders(req: IncomingMessage, upgrade: boolean): void {
  const h = req.headers;
  if (!upgrade) {
    const connection = h.connection;
    if (typeof connection === "string")
      for (const raw of connection.split(",")) {
        const name = raw.trim().toLowerCase();
        if (name && name !== "te" && h[name] !== undefined) delete h[name];
      }
    // only names present are deleted: a delete reshapes the object, and most requests carry none of these
    for (const name of HOP_BY_HOP) if (h[name] !== undefined) delete h[name];
  } else {
    delete h["proxy-connection"];
    delete h["proxy-authorization"];
  }
  if (h.forwarded !== undefined) delete h.forwarded;
  const visitor = visitorOf(req);
  h["x-forwarded-for"] = visitor.address;
  h["x-forwarded-proto"] = visitor.https ? "https" : "http";
  h["x-forwarded-host"] = h.host ?? "";
  h["x-forwarded-port"] = visitor.port;
  if (h.cookie !== undefined) {
    const cookie = withoutPlatformCookies(h.cookie);
    if (cookie === undefined) delete h.cookie;
    else h.cookie = cookie;
  }
}

/** A request the edge may send twice: idempotent and without a body, so nothing of it was consumed. */
export function replayable(req: IncomingMessage): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] === undefined && (length === undefined || length === "0");
}

/** response headers that describe the upstream's connection, not the answer (and `transfer-encoding`: node frames the body again) */
const HOP_BY_HOP_ANSWER = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"];

/**
 * Prepares an upstream's answer headers (lower-case names) for the visitor, in place: hop-by-hop headers (and
 * those the upstream's Connection names) stay on the upstream's hop, `Connection` is this hop's (`close` when the
 * edge or the visitor's connection ends after this answer), `Set-Cookie` loses the platform's cookies.
 */
export function prepareAnswerHeaders(h: Record<string, string | string[] | undefined>, keepAlive: boolean): void {
  const named = h.connection;
  if (typeof named === "string" && named.includes(","))
    for (const name of named.split(",")) delete h[name.trim().toLowerCase()];
  else if (typeof named === "string" && named !== "keep-alive" && named !== "close") delete h[named.toLowerCase()];
  for (const name of HOP_BY_HOP_ANSWER) if (h[name] !== undefined) delete h[name];
  h.connection = keepAlive ? "keep-alive" : "close";
  const cookies = h["set-cookie"];
  if (cookies !== undefined) h["set-cookie"] = appSetCookies(typeof cookies === "string" ? [cookies] : cookies);
}
