import type { IncomingMessage } from "node:http";
import type { EdgeAccessPolicy, EdgeVisitorGate } from "./contract.js";
import type { EdgeTarget } from "../kernel/area.js";
import type { Queryable } from "../store/db.js";
import type { Principal } from "../auth/principal.js";
import { sameOwner } from "../kernel/owner.js";
import { SESSION_COOKIE } from "../http/session-cookie.js";
import { cookieValue } from "./headers.js";

/**
 * What the edge does with a request for a known target, decided before anything reaches an upstream. A deny with
 * `signIn` is the edge's sign-in page (a form posting to /.platform/sign-in, sign-in.ts), returning to `next`.
 */
export type Decision =
  | { kind: "allow" }
  | { kind: "deny"; status: number; title: string; message: string; signIn?: { next: string } }
  | { kind: "redirect"; location: string; headers?: Record<string, string> };

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
 * One visibility's rule. `public` and `owner-only` are built in; partner locks (tenant, department, invited refs,
 * visitor sessions with their own cookie and a 302 to a login URL) are further rules registered with `addRule`
 * under their visibility names. Organization visibility (company, department, invited, private) is not a target
 * visibility: every target an organization owns goes to the organizations area's policy (`addPolicy`, from
 * kernel.all("edgeAccess")), since the edge route sources know nothing of organizations. `key` tells
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

/** The edge's own sign-in page for a visitor without a session (401, never the content). */
export function signInPage(url: string): Decision {
  const u = new URL(url);
  return {
    kind: "deny",
    status: 401,
    title: "Sign in",
    message: "This site is visible to members of its organization only; sign in with your platform account.",
    signIn: { next: `${u.pathname}${u.search}` },
  };
}

/**
 * An owner kind's access policy (kernel.all("edgeAccess"): organization visibility) as a rule: the target's visibility
 * from the policy (cached per target, dropped with the decisions), "public" lets anyone in without looking at the
 * session; otherwise a visitor without a session gets the sign-in page, a signed-in one the policy's answer.
 */
function policyRule(policy: EdgeAccessPolicy, q: Queryable, visibilityOf: (t: EdgeTarget) => Promise<string>) {
  const rule: AccessRule = {
    decide: async (target, visitor) => {
      const visibility = await visibilityOf(target);
      if (visibility === "public") return ALLOW;
      const principal = await visitor.principal();
      if (!principal) return signInPage(visitor.url);
      return (await policy.admits(q, target, visibility, principal.accountId))
        ? ALLOW
        : deny(403, "Not shared with you", "This site is not shared with your account.");
    },
    key: async (target, visitor) => {
      const visibility = await visibilityOf(target);
      if (visibility === "public") return "public";
      // no session: the sign-in page carries the request's path, so it is not kept
      const principal = await visitor.principal();
      return principal ? `${visibility}\0${principal.accountId}` : null;
    },
  };
  return rule;
}

/**
 * A policy with its own visitors (kernel EdgeVisitorGate: partner site locks) as a rule: the gate decides every
 * request, public ones included (its one-time links are answered on the site's own host), with the visibility
 * kept per target like any policy's.
 */
function gateRule(gate: EdgeVisitorGate, q: Queryable, visibilityOf: (t: EdgeTarget) => Promise<string>): AccessRule {
  return {
    decide: async (target, visitor) =>
      gate.decide(q, target, await visibilityOf(target), { url: visitor.url, cookies: visitor.cookies }),
    key: async (target, visitor) =>
      gate.key(target, await visibilityOf(target), { url: visitor.url, cookies: visitor.cookies }),
  };
}

interface Cached {
  decision: Decision;
  expires: number;
  /** when it last moved to the recent end of the LRU order */
  touched: number;
}

/**
 * The edge's one access decision point, `decide(target, request)`: allow, deny (a status and a page) or
 * redirect. Public targets pass without looking at the request. Other visibilities go to their rule; a
 * visibility without a rule is refused (fail closed). Decisions are kept briefly per (target, visibility,
 * rule key), least recently used first out when full, and dropped with the routes whenever a route source
 * announces a change.
 */
export class EdgeAccess {
  private readonly rules = new Map<string, AccessRule>();
  /** owner kinds decided by a policy (kernel.all("edgeAccess")) instead of the target's own visibility */
  private readonly ownerRules = new Map<string, AccessRule>();
  private readonly policyChannels = new Set<string>();
  private readonly cache = new Map<string, Cached>();
  private readonly visibilities = new Map<string, { visibility: Promise<string>; expires: number }>();
  /** counts invalidations: a decision begun before one is answered but neither kept nor pushed to nginx */
  private epoch = 0;

  constructor(
    private readonly tokens: PrincipalSource,
    private readonly opts: {
      ttlMs: number;
      loginUrl: string | null;
      maxEntries?: number;
      /** an allow served from a kept decision, kept until `expiresAt` (nginx caches it as long: nginx/access-cache.ts) */
      admitted?: (request: IncomingMessage, expiresAt: number) => void;
    },
  ) {
    this.addRule("owner-only", ownerOnlyRule());
  }

  /** Registers (or replaces) the rule of one visibility. */
  addRule(visibility: string, rule: AccessRule): void {
    this.rules.set(visibility, rule);
    this.invalidate();
  }

  /**
   * Targets of `policy.ownerKind` (organizations) go to the policy, whatever their own visibility says; the edge
   * LISTENs on its channel and calls `invalidate` on every announcement.
   */
  addPolicy(policy: EdgeAccessPolicy, q: Queryable): void {
    const visibilityOf = (target: EdgeTarget): Promise<string> => {
      const key = `${target.kind}\0${target.id}`;
      const hit = this.visibilities.get(key);
      if (hit && hit.expires > Date.now()) return hit.visibility;
      const visibility = policy.visibility(q, target);
      // a failed load is not kept; a change announced meanwhile clears the map, so no stale load outlives it
      visibility.catch(() => this.visibilities.get(key)?.visibility === visibility && this.visibilities.delete(key));
      if (this.opts.ttlMs > 0) {
        if (this.visibilities.size >= (this.opts.maxEntries ?? 50_000)) this.visibilities.clear();
        this.visibilities.set(key, { visibility, expires: Date.now() + this.opts.ttlMs });
      }
      return visibility;
    };
    this.ownerRules.set(
      policy.ownerKind,
      policy.visitors ? gateRule(policy.visitors, q, visibilityOf) : policyRule(policy, q, visibilityOf),
    );
    this.policyChannels.add(policy.channel);
    this.invalidate();
  }

  /** the NOTIFY channels of the policies (the edge LISTENs on them) */
  get channels(): string[] {
    return [...this.policyChannels];
  }

  /** Whether a target is served to anyone without a decision (the proxy's fast path): public and no policy's. */
  open(target: EdgeTarget): boolean {
    return target.visibility === "public" && !this.ownerRules.has(target.owner.kind);
  }

  /** Policies or routes changed: the decisions and the targets' visibilities go. */
  invalidate(): void {
    this.forgetDecisions();
    this.visibilities.clear();
  }

  /** A session revoked: only the decisions go (those in flight are not kept); visibilities do not depend on it. */
  forgetDecisions(): void {
    this.epoch++;
    this.cache.clear();
  }

  async decide(target: EdgeTarget, request: IncomingMessage, url: string): Promise<Decision> {
    const owned = this.ownerRules.get(target.owner.kind);
    const visibility: string = owned ? `owner:${target.owner.kind}` : target.visibility;
    if (visibility === "public") return ALLOW;
    const rule = owned ?? this.rules.get(visibility);
    if (!rule)
      return deny(403, "Not available", "This app's visibility is not supported by this edge; it is not served.");
    const epoch = this.epoch;
    const visitor = this.visitor(request, url);
    const key = rule.key ? await rule.key(target, visitor) : null;
    const cacheKey = key === null ? null : `${target.kind}\0${target.id}\0${visibility}\0${key}`;
    if (cacheKey !== null) {
      const hit = this.cache.get(cacheKey);
      const now = Date.now();
      if (hit && hit.expires > now) {
        // most recently used last (moved at most once a second): a full cache drops the oldest use first
        if (hit.touched < now - 1000) {
          hit.touched = now;
          this.cache.delete(cacheKey);
          this.cache.set(cacheKey, hit);
        }
        if (hit.decision.kind === "allow" && epoch === this.epoch) this.opts.admitted?.(request, hit.expires);
        return hit.decision;
      }
    }
    const decision = await rule.decide(target, visitor);
    if (cacheKey !== null && decision.kind !== "redirect" && this.opts.ttlMs > 0 && epoch === this.epoch) {
      if (this.cache.size >= (this.opts.maxEntries ?? 50_000)) this.cache.delete(this.cache.keys().next().value!);
      const expires = Date.now() + this.opts.ttlMs;
      this.cache.set(cacheKey, { decision, expires, touched: Date.now() });
      if (decision.kind === "allow") this.opts.admitted?.(request, expires);
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
