/**
 * Partner site locks at the edge (README.md here): the kernel EdgeAccessPolicy of owner kind partner_child with a
 * visitor gate. The edge keeps each site's lock mode and its decisions per (site, visitor session) for a few
 * seconds and drops them on NOTIFY partner_site_access (migration 044), sent by every change of a lock, an invite
 * list, the department chart, the login URL, a revoked session or a deleted child.
 */
import { createHash, randomBytes } from "node:crypto";
import type { EdgeAccessPolicy, EdgeVerdict, EdgeVisitorRequest } from "../../edge/contract.js";
import type { Queryable } from "../../store/db.js";
import { departmentScope } from "../public.js";
import * as repo from "./repo.js";

export const ACCESS_CHANNEL = "partner_site_access";
/** the visitor's cookie on a locked site's host (host-only) */
export const VISITOR_COOKIE = "platform_visitor";
/** the one-time link's path on the site's own host */
export const VISITOR_PATH = "/.platform/visitor";
/** a visitor session lasts this long (the partner vouches again after it) */
export const SESSION_TTL_SECONDS = 12 * 3600;

const ALLOW: EdgeVerdict = { kind: "allow" };
const deny = (status: number, title: string, message: string): EdgeVerdict => ({
  kind: "deny",
  status,
  title,
  message,
});

export const hashToken = (secret: string): Buffer => createHash("sha256").update(secret).digest();
export const newToken = (): string => randomBytes(32).toString("base64url");

/** the path (with query) of an absolute URL, without parsing it whole (every request to a child's site asks) */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

const isLink = (url: string) => {
  const path = pathOf(url);
  return path === VISITOR_PATH || path.startsWith(`${VISITOR_PATH}?`);
};

const VISITOR_NEEDLE = `${VISITOR_COOKIE}=`;

/** the visitor cookie's value, found without splitting the header (every request to a locked site asks) */
function visitorCookie(header: string | undefined): string | null {
  if (!header) return null;
  for (let i = header.indexOf(VISITOR_NEEDLE); i >= 0; i = header.indexOf(VISITOR_NEEDLE, i + 1)) {
    if (i > 0 && header[i - 1] !== " " && header[i - 1] !== ";") continue;
    const start = i + VISITOR_NEEDLE.length;
    const end = header.indexOf(";", start);
    return (end < 0 ? header.slice(start) : header.slice(start, end)).trim() || null;
  }
  return null;
}

/** Whether a vouched visitor matches the lock (spec 10-13: only tenant_ref, department_code and subject_ref count). */
async function matches(q: Queryable, lock: repo.LockRow, v: repo.VisitorRow): Promise<boolean> {
  if (v.tenant_ref !== lock.tenant_ref) return false;
  if (lock.mode === "tenant") return true;
  if (lock.mode === "department") {
    if (!v.department_code || !lock.department_code) return false;
    return (await departmentScope(q, lock.partner_id, lock.department_code)).subtree.includes(v.department_code);
  }
  return repo.invited(q, lock.site_id, lock.tenant_ref, v.subject_ref);
}

function toLogin(lock: repo.LockRow, url: string): EdgeVerdict {
  if (!lock.visitor_login_url)
    return deny(401, "Sign in through your portal", "This site is restricted; open it from the service you use.");
  const location = new URL(lock.visitor_login_url);
  location.searchParams.set("return_to", url);
  return { kind: "redirect", location: location.toString() };
}

/** GET /.platform/visitor?token=…: the link becomes a session cookie for this host, then a 302 to the page. */
async function redeem(q: Queryable, siteId: string, url: string): Promise<EdgeVerdict> {
  const u = new URL(url);
  const link = u.searchParams.get("token");
  const session = newToken();
  const row = link ? await repo.redeemLink(q, hashToken(link), siteId, hashToken(session), SESSION_TTL_SECONDS) : null;
  if (!row) return deny(403, "Link not valid", "This sign-in link was already used or has expired; ask for a new one.");
  const attributes = [`${VISITOR_COOKIE}=${session}`, "Path=/", "HttpOnly", "SameSite=Lax"];
  attributes.push(`Max-Age=${SESSION_TTL_SECONDS}`);
  if (u.protocol === "https:") attributes.push("Secure");
  // the stored return path, never the link's own `return` (it is there for people reading the link)
  return { kind: "redirect", location: row.return_path, headers: { "set-cookie": attributes.join("; ") } };
}

export function partnerSiteAccessPolicy(): EdgeAccessPolicy {
  const visibility = async (q: Queryable, target: { kind: string; id: string }) =>
    target.kind === "site" ? ((await repo.lockOf(q, target.id))?.mode ?? "public") : "public";
  return {
    ownerKind: "partner_child",
    channel: ACCESS_CHANNEL,
    visibility,
    // visitors of locked sites are the partner's people, never platform accounts
    admits: async () => false,
    // site views speak the organizations' words: a tenant is the customer company
    explain: async (q, target) => {
      const mode = await visibility(q, target);
      const v = mode === "tenant" ? "company" : mode;
      return { visibility: v, source: "site", own: v };
    },
    visitors: {
      key: (_target, visibility, req: EdgeVisitorRequest) => {
        if (isLink(req.url)) return null;
        if (visibility === "public") return "public";
        const token = visitorCookie(req.cookies);
        // no session: the redirect carries the request's URL, so it is not kept. The cookie itself keys the
        // decision (in this process's memory only, like the token resolver's cache): no hash per request
        return token ? `visitor\0${token}` : null;
      },
      decide: async (q, target, visibility, req) => {
        if (isLink(req.url)) return redeem(q, target.id, req.url);
        if (visibility === "public") return ALLOW;
        const lock = await repo.lockOf(q, target.id);
        if (!lock) return ALLOW; // unlocked meanwhile (its NOTIFY is on the way)
        const token = visitorCookie(req.cookies);
        const visitor = token ? await repo.liveSession(q, hashToken(token), target.id) : null;
        if (!visitor) return toLogin(lock, req.url);
        return (await matches(q, lock, visitor))
          ? ALLOW
          : deny(403, "Not shared with you", "This site is restricted to other people of its organization.");
      },
    },
  };
}
