import type { IncomingMessage } from "node:http";
import type { EdgeTarget } from "../kernel/area.js";
import type { Principal } from "../auth/principal.js";
import { sameOwner } from "../kernel/owner.js";
import { SESSION_COOKIE } from "../http/session-cookie.js";
import { cookieValue } from "./headers.js";

/** What the edge does with a request for a known target, decided before anything reaches an upstream. */
export type Decision =
  | { kind: "allow" }
  | { kind: "deny"; status: number; title: string; message: string }
  | { kind: "redirect"; location: string };

/** Who is asking, resolved only when a rule needs it. */
export interface Visitor {
  /** the signed-in account behind the platform session cookie, or null */
  principal(): Promise<Principal | null>;
  /** the address the visitor asked for (for a return after sign-in) */
  url: string;
  /** where a visitor without a session goes: a redirect to EDGE_LOGIN_URL, else a 401 page */
  signIn(): Decision;
  cookies: string | undefined;
}

/**
 * One visibility's rule. `public` and `owner-only` are built in; organization visibility (company, department,
 * invited) and partner locks (tenant, department, invited refs, visitor sessions with their own cookie and a
 * 302 to a login URL) are further rules registered with `addRule` under their visibility names. `key` tells
 * the decision cache what the decision depends on beyond the target (null: do not cache, e.g. redirects that
 * carry the request's URL).
 */
export interface AccessRule {
  decide(target: EdgeTarget, visitor: Visitor): Promise<Decision>;
  key?(target: EdgeTarget, visitor: Visitor): Promise<string | null>;
}

/** Resolves a session token to its principal (auth/token-resolver.ts, which drops revoked tokens at once). */
export interface PrincipalSource {
  resolve(secret: string): Promise<Principal | null>;
}

const ALLOW: Decision = { kind: "allow" };

export const deny = (status: number, title: string, message: string): Decision => ({
  kind: "deny",
  status,
  title,
  message,
});

/** The owner (or, for an account-owned app, the account itself) signed in through the console's session. */
export function ownerOnlyRule(): AccessRule {
  return {
    decide: async (target, visitor) => {
      const principal = await visitor.principal();
      if (!principal) return visitor.signIn();
      const owner =
        sameOwner(principal.owner, target.owner) ||
        (target.owner.kind === "account" && target.owner.id === principal.accountId);
      // later: members of an owning organization (its rule joins here through the org area's membership source)
      return owner ? ALLOW : deny(403, "Not yours", "This app is visible to its owner only.");
    },
    key: async (_target, visitor) => (await visitor.principal())?.tokenId ?? null,
  };
}

interface Cached {
  decision: Decision;
  expires: number;
}

/**
 * The edge's one access decision point, `decide(target, request)`: allow, deny (a status and a page) or
 * redirect. Public targets pass without looking at the request. Other visibilities go to their rule; a
 * visibility without a rule is refused (fail closed). Decisions are kept briefly per (target, visibility,
 * rule key) and dropped with the routes whenever a route source announces a change.
 */
export class EdgeAccess {
  private readonly rules = new Map<string, AccessRule>();
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly tokens: PrincipalSource,
    private readonly opts: { ttlMs: number; loginUrl: string | null; maxEntries?: number },
  ) {
    this.addRule("owner-only", ownerOnlyRule());
  }

  /** Registers (or replaces) the rule of one visibility. */
  addRule(visibility: string, rule: AccessRule): void {
    this.rules.set(visibility, rule);
    this.invalidate();
  }

  invalidate(): void {
    this.cache.clear();
  }

  async decide(target: EdgeTarget, request: IncomingMessage, url: string): Promise<Decision> {
    const visibility: string = target.visibility;
    if (visibility === "public") return ALLOW;
    const rule = this.rules.get(visibility);
    if (!rule)
      return deny(403, "Not available", "This app's visibility is not supported by this edge; it is not served.");
    const visitor = this.visitor(request, url);
    const key = rule.key ? await rule.key(target, visitor) : null;
    const cacheKey = key === null ? null : `${target.kind}\0${target.id}\0${visibility}\0${key}`;
    if (cacheKey !== null) {
      const hit = this.cache.get(cacheKey);
      if (hit && hit.expires > Date.now()) return hit.decision;
    }
    const decision = await rule.decide(target, visitor);
    if (cacheKey !== null && decision.kind !== "redirect" && this.opts.ttlMs > 0) {
      if (this.cache.size >= (this.opts.maxEntries ?? 50_000)) this.cache.clear();
      this.cache.set(cacheKey, { decision, expires: Date.now() + this.opts.ttlMs });
    }
    return decision;
  }

  private visitor(request: IncomingMessage, url: string): Visitor {
    let principal: Promise<Principal | null> | null = null;
    const cookies = request.headers.cookie;
    const loginUrl = this.opts.loginUrl;
    return {
      url,
      cookies,
      principal: () => {
        if (!principal) {
          const token = cookieValue(cookies, SESSION_COOKIE);
          principal = token ? this.tokens.resolve(token) : Promise.resolve(null);
        }
        return principal;
      },
      signIn: () => {
        if (!loginUrl) return deny(401, "Sign in first", "This app is visible to its owner only; sign in to see it.");
        const location = new URL(loginUrl);
        location.searchParams.set("next", url);
        return { kind: "redirect", location: location.toString() };
      },
    };
  }
}
