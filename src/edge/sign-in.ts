import type { IncomingMessage, ServerResponse } from "node:http";
import { visitorOf } from "./headers.js";
import type { FastifyBaseLogger } from "fastify";
import { ApiError } from "../http/errors.js";
import { SESSION_COOKIE } from "../http/session-cookie.js";
import { hostName } from "./config.js";
import { pages, sendPage, type EdgePage } from "./pages.js";

/** The edge's own sign-in form posts here, on the host of the site it protects. */
export const SIGN_IN_PATH = "/.platform/sign-in";

const MAX_BODY = 8 * 1024;
/** sign-in attempts per visitor address and second, on each edge process */
const ATTEMPTS_PER_SECOND = 5;

export interface SignInOptions {
  /** e-mail and password to a new session token, as the accounts area signs in (throws invalid_credentials) */
  login(email: string, password: string): Promise<string>;
  /** whether the page offers "Sign in with the suite" too (a suite is configured) */
  suite: boolean;
  /** the session's lifetime (SESSION_TTL_DAYS), for the cookie's Max-Age */
  maxAgeSeconds: number;
  /** whether the host names a target (the form is only answered where a site is served) */
  routed(host: string): Promise<boolean>;
  /** counts an attempt of one visitor address in the current second (the API's rate limit store) */
  hit(key: string): Promise<{ count: number }>;
  log: FastifyBaseLogger;
}

export const isSignIn = (req: IncomingMessage): boolean =>
  req.method === "POST" && (req.url === SIGN_IN_PATH || req.url?.startsWith(`${SIGN_IN_PATH}?`) === true);

/** Only a path on the same host (never `//other`, `/\other` or a full URL) is a place to return to. */
export function safeNext(next: string | null): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

/** The sign-in page again (401), with what went wrong; `suite`: with the "Sign in with the suite" link. */
export const signInForm = (next: string, error?: string, suite?: boolean): EdgePage => ({
  status: 401,
  title: "Sign in",
  message: "This site is visible to members of its organization only; sign in with your platform account.",
  signIn: { next, error, suite },
});

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(null);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(null));
  });
}

/**
 * POST /.platform/sign-in on a site's host: the edge's sign-in form (access.ts signInPage) sends e-mail, password
 * and the path to return to. The password is checked the way the API's /v1/auth/login does (the accounts area's
 * login, handed in), and the new session token becomes the host's `platform_session` cookie (HttpOnly,
 * SameSite=Lax, Path=/, Secure over HTTPS), then a 303 back to the page. A cross-site form post (Origin or
 * Sec-Fetch-Site naming another site) is refused, so no other page signs a visitor in to someone else's account.
 */
export async function answerSignIn(req: IncomingMessage, res: ServerResponse, opts: SignInOptions): Promise<void> {
  const host = hostName(req.headers.host);
  if (!host || !(await opts.routed(host))) return sendPage(res, pages.unknownHost(), req.method);
  const https = visitorOf(req).https;
  const origin = req.headers.origin;
  const site = req.headers["sec-fetch-site"];
  if (
    (origin !== undefined && origin !== "null" && origin !== `${https ? "https" : "http"}://${req.headers.host}`) ||
    (site !== undefined && site !== "same-origin" && site !== "none")
  )
    return sendPage(res, { status: 403, title: "Refused", message: "Sign in from this site's own page." }, "POST");
  const remote = visitorOf(req).address;
  if ((await opts.hit(`edge-sign-in:${remote}`)).count > ATTEMPTS_PER_SECOND)
    return sendPage(
      res,
      {
        status: 429,
        title: "Too many attempts",
        message: "Wait a moment, then try again.",
        headers: { "retry-after": "1" },
      },
      "POST",
    );
  const body = await readBody(req);
  if (body === null) return sendPage(res, { status: 413, title: "Too large", message: "The form is too large." });
  const fields = new URLSearchParams(body);
  const next = safeNext(fields.get("next"));
  const email = fields.get("email")?.trim() ?? "";
  const password = fields.get("password") ?? "";
  if (!email || !password || email.length > 254 || password.length > 200)
    return sendPage(res, signInForm(next, "Enter your e-mail and password.", opts.suite), "POST");
  let token: string;
  try {
    token = await opts.login(email, password);
  } catch (err) {
    if (err instanceof ApiError && err.code === "invalid_credentials")
      return sendPage(res, signInForm(next, "The e-mail or password is wrong.", opts.suite), "POST");
    opts.log.error({ err }, "edge sign-in failed");
    return sendPage(res, pages.storeDown(), "POST");
  }
  signedIn(res, { token, next, https, maxAgeSeconds: opts.maxAgeSeconds });
}

/**
 * The end of a sign-in on a site's host (the form here, the suite's landing): the session token becomes the host's
 * `platform_session` cookie (HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS), then a 303 back to the page;
 * `extraCookies` go along (the suite's binding, cleared).
 */
export function signedIn(
  res: ServerResponse,
  s: { token: string; next: string; https: boolean; maxAgeSeconds: number; extraCookies?: string[] },
): void {
  const cookie = [`${SESSION_COOKIE}=${s.token}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${s.maxAgeSeconds}`];
  if (s.https) cookie.push("Secure");
  res.writeHead(303, {
    location: s.next,
    "set-cookie": [cookie.join("; "), ...(s.extraCookies ?? [])],
    "cache-control": "no-store",
    "content-length": 0,
  });
  res.end();
}
