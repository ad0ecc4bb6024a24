import { createHash, randomBytes } from "node:crypto";
import { inTransaction } from "../../store/db.js";
import type { Platform } from "../../kernel/context.js";
import { ApiError } from "../../http/errors.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { issueSignInSession } from "../../accounts/public.js";
import { billingModeOf, findOrg, membership, type OrgMembership } from "../../orgs/public.js";
import { requestDepartmentSync } from "../directory/public.js";
import { requireSuite, suiteOf } from "../state.js";
import { admit, SignInNotice } from "./admit.js";
import * as repo from "./repo.js";

/** Where a finished sign-in lands in the console when the start named nowhere (the console's suite landing). */
export const DEFAULT_RETURN_TO = "/suite";
/** Where a notice sends the browser: the console's sign-in page shows it in words. */
export const NOTICE_PAGE = "/signin";
const LOGIN_CODE_TTL_SECONDS = 120;

const sha256 = (s: string) => createHash("sha256").update(s).digest();
const newCode = () => randomBytes(32).toString("base64url");

/** The edge's landing on a site's host (src/edge/suite-sign-in.ts): "Sign in with the suite" on a company site. */
export const EDGE_LANDING_PATH = "/.platform/suite-landing";
/** …and where such a sign-in starts, on the same host (the sign-in page's link). */
const SITE_START_PATH = "/.platform/suite-sign-in";

/** Where a sign-in goes back to: a path or loopback address (`site: false`), or the edge's landing on a site's host. */
export interface ReturnTo {
  url: string;
  site: boolean;
}

/**
 * Where the browser may be sent back to: a path of this platform (one leading "/"), a loopback address with a
 * port (the CLI's one-shot server), or the edge's landing (/.platform/suite-landing) on a host the edge serves
 * (`routed`: the edge's answer; the landing is the edge's own, never the site's, so the code reaches no app).
 * Anything else could hand a login code to another site.
 */
export async function checkReturnTo(
  raw: string | undefined,
  routed: ((host: string) => Promise<boolean>) | null = null,
): Promise<ReturnTo> {
  if (raw === undefined || raw === "") return { url: DEFAULT_RETURN_TO, site: false };
  const bad = () =>
    new ApiError(
      "invalid_request",
      `return_to must be a path of this platform ("/..."), a loopback address such as http://127.0.0.1:<port>/callback, or ${EDGE_LANDING_PATH} on a host this platform serves.`,
    );
  if (raw.length > 2000) throw bad();
  if (raw.startsWith("/")) {
    if (raw.startsWith("//") || raw.includes("\\") || [...raw].some((ch) => ch.charCodeAt(0) < 0x20)) throw bad();
    return { url: raw, site: false };
  }
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw bad();
  }
  if (!["http:", "https:"].includes(u.protocol) || u.username || u.password) throw bad();
  if (u.protocol === "http:" && ["127.0.0.1", "localhost"].includes(u.hostname) && u.port)
    return { url: u.href, site: false };
  if (u.pathname === EDGE_LANDING_PATH && !u.hash && routed && (await routed(u.host)))
    return { url: u.href, site: true };
  throw bad();
}

/** return_to with the query parameters added (a path stays a path). */
export function withQuery(returnTo: string, params: Record<string, string>): string {
  const isPath = returnTo.startsWith("/");
  const u = new URL(returnTo, "http://platform.invalid");
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return isPath ? `${u.pathname}${u.search}${u.hash}` : u.href;
}

export type CallbackOutcome =
  { kind: "code"; code: string; returnTo: string } | { kind: "notice"; error: ApiError; returnTo: string };

/** The suite's sign-in: start, callback, exchange, the owner's recovery; the setup wizard and join policy. */
export function signInService(p: Platform) {
  const suite = () => requireSuite(suiteOf(p));

  /**
   * Begins a sign-in; `browser` is a fresh random value the route sets as a cookie in the browser that started it
   * (login CSRF: the console's exchange later asks for the same cookie).
   */
  /**
   * A sign-in for the edge's landing on a site's host (`site`) is bound by the edge instead (suiteEdgeSignIn, in
   * module.ts): its own cookie on that host, whose SHA-256 comes as `browserHash`, and `browser` is null (no cookie
   * here). Such a return_to comes only from the edge, never from the public start route: other sign-ins are bound
   * by that route's cookie.
   */
  async function start(
    returnToRaw: string | undefined,
    browserHash?: Buffer,
  ): Promise<{ url: string; browser: string | null }> {
    const returnTo = await checkReturnTo(returnToRaw, p.kernel.use("edgeRoutedHost"));
    if (returnTo.site !== (browserHash !== undefined))
      throw new ApiError(
        "invalid_request",
        returnTo.site
          ? `return_to on a site's host is for that site's own sign-in page: open ${SITE_START_PATH} there.`
          : "A browser binding is only for a return_to on a site's host.",
      );
    const begun = await suite().identity.begin();
    const browser = returnTo.site ? null : newCode();
    const hash = browserHash ?? sha256(browser!);
    await repo.saveState(p.db, { ...begun, returnTo: returnTo.url, browserHash: hash });
    return { url: begun.url, browser };
  }

  const failed = (why: string) =>
    new ApiError("suite_sign_in_failed", `The suite sign-in could not be finished: ${why}. Start it again.`);

  /**
   * Finishes a sign-in at the callback: the state is taken once (unknown, used or expired: 400), the suite's code
   * exchanged and its ID token validated, then the join rules decide (admit.ts) in one transaction. A notice does
   * not fail the callback: the browser goes to the sign-in page (or the CLI) with it.
   */
  async function callback(
    query: Record<string, string | undefined>,
    callbackUrl: URL,
    req: { ip: string; requestId: string },
  ): Promise<CallbackOutcome> {
    const provider = suite();
    if (!query.state) throw failed("the callback carries no state");
    const saved = await repo.takeState(p.db, query.state);
    if (!saved) throw failed("the sign-in is unknown, already finished or older than 10 minutes");
    if (query.error)
      throw failed(`the suite answered ${query.error}${query.error_description ? `: ${query.error_description}` : ""}`);
    const { claims, tokens } = await provider.identity.finish(callbackUrl, {
      state: saved.state,
      nonce: saved.nonce,
      codeVerifier: saved.code_verifier,
    });
    if (!claims.email) throw failed("the suite gave no e-mail address for this person");
    const noticeTo = saved.return_to.startsWith("/") ? NOTICE_PAGE : saved.return_to;
    let admitted;
    try {
      admitted = await inTransaction(p.db, async (tx) => {
        const a = await admit(tx, {
          p,
          provider,
          issuer: provider.issuer,
          claims: { ...claims, email: claims.email! },
          tokens,
          ip: req.ip,
          requestId: req.requestId,
        });
        if ("notice" in a) return a;
        const code = newCode();
        await repo.insertLoginCode(tx, {
          codeHash: sha256(code),
          accountId: a.accountId,
          orgId: a.orgId,
          ttlSeconds: LOGIN_CODE_TTL_SECONDS,
          browserHash: saved.browser_hash,
        });
        return { ...a, code };
      });
    } catch (err) {
      if (err instanceof SignInNotice) return { kind: "notice", error: err, returnTo: noticeTo };
      throw err;
    }
    if ("notice" in admitted) return { kind: "notice", error: admitted.notice, returnTo: noticeTo };
    // departments mirror the suite's chart at every login (the directory part; it records and schedules the work)
    await requestDepartmentSync(p, p.db, admitted.orgId).catch((err) =>
      p.log.warn({ err, orgId: admitted.orgId }, "suite sign-in: department sync not requested"),
    );
    return { kind: "code", code: admitted.code, returnTo: saved.return_to };
  }

  /** What a session answer says: the account, its organization, whether the setup wizard is still open. */
  async function sessionFor(accountId: string, orgId: string, token: string, email: string) {
    const m = await membership(p.db, accountId);
    const link = await repo.linkOfOrg(p.db, orgId);
    return {
      token,
      account: { id: accountId, email },
      org_id: orgId,
      setup_pending: link ? link.setup_done_at === null : false,
      role: m?.orgId === orgId ? m.role : null,
    };
  }

  /** The one-time login code for a session (the session never rides a URL). */
  /** `browser`: the console's exchange passes the sign-in cookie (or null without one): the code must be this browser's. */
  async function exchange(code: string, browser?: string | null) {
    const taken = await inTransaction(p.db, async (tx) => {
      const row = await repo.takeLoginCode(tx, sha256(code), browser === undefined ? undefined : sha256(browser ?? ""));
      if (!row) return null;
      const email = (await repo.identityEmail(tx, row.account_id)) ?? "";
      return { ...row, email, token: await issueSignInSession(tx, p.config, row.account_id) };
    });
    if (!taken)
      throw failed(
        browser === undefined
          ? "the login code is unknown, already used or older than 2 minutes"
          : "the login code is unknown, already used, older than 2 minutes or from a sign-in this browser did not start",
      );
    return sessionFor(taken.account_id, taken.org_id, taken.token, taken.email);
  }

  /** The owner's break-glass code: shown once, stored hashed; a new one replaces the old. */
  async function newRecoveryCode(pr: Principal, m: OrgMembership) {
    await linkOrNotFound(m.orgId);
    const code = `rc_${randomBytes(24).toString("base64url")}`;
    await auditedTransaction(p.db, pr, (tx) =>
      repo.putRecoveryCode(tx, {
        orgId: m.orgId,
        accountId: pr.accountId,
        email: pr.account.email,
        codeHash: sha256(code),
      }),
    );
    return { recovery_code: code };
  }

  /** The owner signs in with the recovery code when the suite cannot sign them in. */
  async function recover(email: string, code: string) {
    const refused = () =>
      new ApiError("invalid_credentials", "The e-mail or recovery code is wrong, or the code was already used.");
    const taken = await inTransaction(p.db, async (tx) => {
      const row = await repo.takeRecoveryCode(tx, email.trim(), sha256(code.trim()));
      if (!row) return null;
      const org = await findOrg(tx, row.org_id);
      if (!org || org.owner_account_id !== row.account_id) return null; // ownership moved on: the code is void
      return { ...row, token: await issueSignInSession(tx, p.config, row.account_id) };
    });
    if (!taken) throw refused();
    return sessionFor(taken.account_id, taken.org_id, taken.token, taken.email);
  }

  async function linkOrNotFound(orgId: string, lock = false, q = p.db as Parameters<typeof repo.linkOfOrg>[0]) {
    const link = await repo.linkOfOrg(q, orgId, lock);
    if (!link)
      throw new ApiError(
        "not_found",
        "This organization is not linked to a suite; the suite settings exist only for an organization its suite admin opened by suite sign-in.",
      );
    return link;
  }

  const linkView = async (link: repo.LinkRow) => ({
    company_id: link.company_id,
    issuer: link.issuer,
    setup_done: link.setup_done_at !== null,
    setup_done_at: link.setup_done_at?.toISOString() ?? null,
    join_policy: link.join_policy,
    join_units: link.join_units,
    stop_on_exhausted: link.stop_on_exhausted,
    billing_mode: (await billingModeOf(p.db, link.org_id)) ?? "suite",
  });

  return {
    start,
    callback,
    exchange,
    newRecoveryCode,
    recover,
    enabled: () => ({ enabled: suiteOf(p).provider !== null, issuer: suiteOf(p).config.issuer }),
    async link(m: OrgMembership) {
      return linkView(await linkOrNotFound(m.orgId));
    },
    async joinPolicy(m: OrgMembership) {
      const link = await linkOrNotFound(m.orgId);
      return { policy: link.join_policy, departments: link.join_units };
    },
    async setJoinPolicy(pr: Principal, m: OrgMembership, policy: repo.JoinPolicy, departments: string[] | undefined) {
      if (policy === "departments" && (!departments || departments.length === 0))
        throw new ApiError(
          "invalid_request",
          "policy departments needs departments: the suite unit ids staff may join from.",
        );
      if (policy !== "departments" && departments && departments.length > 0)
        throw new ApiError("invalid_request", `departments is only for policy departments, not ${policy}.`);
      const units = [...new Set(departments ?? [])];
      const link = await auditedTransaction(p.db, pr, async (tx) => {
        await linkOrNotFound(m.orgId, true, tx);
        return repo.setJoinPolicy(tx, m.orgId, policy, units);
      });
      return { policy: link.join_policy, departments: link.join_units };
    },
    async finishSetup(pr: Principal, m: OrgMembership) {
      const link = await auditedTransaction(p.db, pr, async (tx) => {
        await linkOrNotFound(m.orgId, true, tx);
        return repo.finishSetup(tx, m.orgId, pr.accountId);
      });
      return linkView(link);
    },
  };
}

export type SignInService = ReturnType<typeof signInService>;
