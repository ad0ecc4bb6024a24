import type { FastifyReply, FastifyRequest } from "fastify";
import { secretsEqual } from "../auth/secrets.js";

/**
 * The web console's session: the sign-in token in an HttpOnly cookie the page's scripts never read, and a
 * double-submit CSRF token in a readable cookie that state-changing requests must repeat in `X-Platform-CSRF`.
 * A cross-site page can make the browser send the cookies (SameSite=Strict already stops most of that), but
 * cannot read the CSRF cookie nor set a custom header without a CORS preflight, which this API never grants.
 */
export const SESSION_COOKIE = "platform_session";
export const CSRF_COOKIE = "platform_csrf";
export const CSRF_HEADER = "x-platform-csrf";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The request's cookies by name (the first of each name wins; values are URI-decoded when they can be). */
export function readCookies(request: FastifyRequest): Map<string, string> {
  const jar = new Map<string, string>();
  const header = request.headers.cookie;
  if (!header) return jar;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    if (jar.has(name)) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      jar.set(name, decodeURIComponent(raw));
    } catch {
      jar.set(name, raw);
    }
  }
  return jar;
}

/** Whether the request repeats its CSRF cookie in the CSRF header (required for anything but GET/HEAD/OPTIONS). */
export function csrfSatisfied(request: FastifyRequest, jar = readCookies(request)): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  const cookie = jar.get(CSRF_COOKIE);
  const header = request.headers[CSRF_HEADER];
  return typeof header === "string" && !!cookie && cookie.length >= 16 && secretsEqual(header, cookie);
}

/** The console session's token, or why there is none: no cookie, or a state-changing request without CSRF proof. */
export function sessionToken(request: FastifyRequest): { token: string } | { csrfMissing: true } | null {
  const jar = readCookies(request);
  const token = jar.get(SESSION_COOKIE);
  if (!token) return null;
  return csrfSatisfied(request, jar) ? { token } : { csrfMissing: true };
}

function cookieAttributes(request: FastifyRequest, maxAgeSeconds: number, httpOnly: boolean): string {
  const parts = ["Path=/", "SameSite=Strict", `Max-Age=${maxAgeSeconds}`];
  if (httpOnly) parts.push("HttpOnly");
  if (request.protocol === "https") parts.push("Secure");
  return parts.join("; ");
}

/**
 * An HttpOnly cookie for a short browser flow (the suite sign-in's browser binding): SameSite=Lax, since the browser
 * comes back to the platform from another site (the suite) within the flow.
 */
export function flowCookie(request: FastifyRequest, name: string, value: string, maxAgeSeconds: number): string {
  const parts = [`${name}=${value}`, "Path=/", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, "HttpOnly"];
  if (request.protocol === "https") parts.push("Secure");
  return parts.join("; ");
}

/** Sets (or, with null, clears) the session cookie and the CSRF cookie together. */
export function setSessionCookies(
  request: FastifyRequest,
  reply: FastifyReply,
  session: { token: string; csrf: string; maxAgeSeconds: number } | null,
): void {
  const age = session?.maxAgeSeconds ?? 0;
  reply.header("set-cookie", [
    `${SESSION_COOKIE}=${session?.token ?? ""}; ${cookieAttributes(request, age, true)}`,
    `${CSRF_COOKIE}=${session?.csrf ?? ""}; ${cookieAttributes(request, age, false)}`,
  ]);
}

/** A CSRF cookie for a visitor who has none yet (set with the console's page, before sign-in). */
export function csrfCookie(request: FastifyRequest, csrf: string): string {
  return `${CSRF_COOKIE}=${csrf}; ${cookieAttributes(request, 60 * 60 * 24 * 400, false)}`;
}
