import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { ApiError } from "../http/errors.js";
import { hostName } from "./config.js";
import { cookieValue, SUITE_BINDING_COOKIE, visitorOf } from "./headers.js";
import { pages, sendPage, sendRedirect } from "./pages.js";
import { safeNext, signedIn, signInForm } from "./sign-in.js";

/** The sign-in page's "Sign in with the suite" link, on the site's host. */
export const SUITE_SIGN_IN_PATH = "/.platform/suite-sign-in";
/** Where the suite's callback sends the browser back, on the site's host, with suite_code (or notice). */
export const SUITE_LANDING_PATH = "/.platform/suite-landing";
/** the binding cookie's lifetime: as long as the suite's sign-in state lives */
const BINDING_SECONDS = 600;

export interface SuiteSignInOptions {
  /** a suite sign-in back to `returnTo`, bound to the binding's SHA-256 (hex) → the suite's authorization address */
  start(returnTo: string, browserHash: string): Promise<string>;
  /** a login code of a sign-in bound to `browser` → a session token; throws ApiError suite_sign_in_failed */
  exchange(code: string, browser: string): Promise<string>;
  maxAgeSeconds: number;
  routed(host: string): Promise<boolean>;
  log: FastifyBaseLogger;
}

/** The suite's notices (src/suite/sign-in), in words for the sign-in page. */
const NOTICES: Record<string, string> = {
  suite_setup_pending:
    "Your company's administrator has not finished setting up sign-in with the suite yet; try again later.",
  suite_join_department:
    "Your department is not among those whose staff may join this organization; ask its administrator.",
  suite_join_invite: "This organization admits only staff its administrator invited; ask them for an invitation.",
  suite_not_linked: "Your company has no organization on this platform yet; its suite administrator signs in first.",
};

const pathOf = (url: string | undefined) => (url ?? "").split("?")[0];

export const isSuiteSignIn = (req: IncomingMessage): boolean =>
  req.method === "GET" && [SUITE_SIGN_IN_PATH, SUITE_LANDING_PATH].includes(pathOf(req.url));

const bindingCookie = (value: string, maxAge: number, https: boolean) =>
  [`${SUITE_BINDING_COOKIE}=${value}`, "Path=/.platform/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAge}`]
    .concat(https ? ["Secure"] : [])
    .join("; ");

/**
 * "Sign in with the suite" on a company site's host, for staff who have no password (issue 27).
 *
 * GET /.platform/suite-sign-in?next=/path makes a random binding, sets it as this host's cookie and sends the
 * browser to the suite, with a sign-in begun in-process (kernel.use("suiteEdgeSignIn").start) that comes back to
 * <this host>/.platform/suite-landing and keeps the binding's SHA-256 with its state and then its login code. Not
 * through the platform's public start route: the hash never rides a URL, and that route keeps refusing a site's
 * host as return_to (only the edge starts such a sign-in).
 *
 * GET /.platform/suite-landing?suite_code=…&next=… exchanges the code with this host's binding cookie, so only the
 * browser that started the sign-in lands signed in (a code someone got for themselves cannot sign a victim in),
 * then sets the host's session cookie as the password form does and 303s to the page.
 */
export async function answerSuiteSignIn(
  req: IncomingMessage,
  res: ServerResponse,
  opts: SuiteSignInOptions,
): Promise<void> {
  const host = hostName(req.headers.host);
  const hostHeader = req.headers.host ?? "";
  // the Host header goes into return_to as it is: only a plain name with an optional port
  if (!host || !/^[a-z0-9.-]+(:\d{1,5})?$/i.test(hostHeader) || !(await opts.routed(host)))
    return sendPage(res, pages.unknownHost(), req.method);
  const https = visitorOf(req).https;
  const query = new URL(req.url ?? "/", "http://edge.invalid").searchParams;
  const next = safeNext(query.get("next"));
  const again = (error: string) => sendPage(res, signInForm(next, error, true), req.method);
  if (pathOf(req.url) === SUITE_SIGN_IN_PATH) {
    const binding = randomBytes(32).toString("base64url");
    const returnTo = new URL(`${https ? "https" : "http"}://${hostHeader}${SUITE_LANDING_PATH}`);
    returnTo.searchParams.set("next", next);
    const hash = createHash("sha256").update(binding).digest("hex");
    let authorization: string;
    try {
      authorization = await opts.start(returnTo.href, hash);
    } catch (err) {
      opts.log.warn({ err }, "edge suite sign-in: the suite sign-in did not start");
      const down = err instanceof ApiError && ["suite_unavailable", "suite_not_configured"].includes(err.code);
      return again(
        down
          ? "The suite cannot be reached right now; try again in a moment."
          : "The suite sign-in could not start; try again.",
      );
    }
    return sendRedirect(res, authorization, { "set-cookie": bindingCookie(binding, BINDING_SECONDS, https) });
  }
  const notice = query.get("notice");
  if (notice) return again(NOTICES[notice] ?? "The suite sign-in could not be finished; try again.");
  const code = query.get("suite_code");
  if (!code || code.length > 200) return again("The suite sent no sign-in code back; start again.");
  const binding = cookieValue(req.headers.cookie, SUITE_BINDING_COOKIE);
  if (!binding) return again("This browser did not start this sign-in (or it is older than 10 minutes); start again.");
  let token: string;
  try {
    token = await opts.exchange(code, binding);
  } catch (err) {
    if (err instanceof ApiError && err.code === "suite_sign_in_failed")
      return again(
        "The suite sign-in could not be finished: the code is used, expired or from a sign-in this browser did not start. Start again.",
      );
    opts.log.error({ err }, "edge suite sign-in failed");
    return sendPage(res, pages.storeDown(), req.method);
  }
  signedIn(res, {
    token,
    next,
    https,
    maxAgeSeconds: opts.maxAgeSeconds,
    extraCookies: [bindingCookie("", 0, https)],
  });
}
