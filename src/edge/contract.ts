/**
 * What the edge asks of other areas, besides the kernel's route sources (contracts.ts, EdgeRouteSource): host names
 * outside the apps domain (contribution "edgeHosts": custom domains) and who may see one owner kind's targets
 * ("edgeAccess": organizations, partners).
 */
import type { Queryable } from "../store/db.js";
import type { EdgeTarget } from "../kernel/contracts.js";
import type { Owner } from "../kernel/owner.js";

declare module "../kernel/capabilities.js" {
  interface Contributions {
    edgeHosts: EdgeHostSource;
    /** one per owner kind */
    edgeAccess: EdgeAccessPolicy;
    /**
     * Sees every answered request after the statistics counted it (log drains' access lines, src/drains). Called on
     * the request path: it must only take note in memory, never wait for anything.
     */
    edgeAccessLog: EdgeAccessLogSink;
  }
  interface Capabilities {
    /**
     * Whether the edge serves a host name (an app, a site or a verified custom domain): the suite's sign-in
     * accepts a return_to on such a host only (the edge's "Sign in with the suite", src/edge/suite-sign-in.ts).
     */
    edgeRoutedHost: (host: string) => Promise<boolean>;
  }
}

/**
 * Host names outside the apps domain (custom domains): the app slug a verified host serves, then resolved by the
 * route sources like <slug>.<APPS_DOMAIN>. `channel` announces changes (verification, deletion).
 */
export interface EdgeHostSource {
  channel: string;
  appSlug(q: Queryable, host: string): Promise<string | null>;
}

/**
 * Who may see the targets of one owner kind, decided by the area that knows those owners (organizations: the
 * visibility of company sites), instead of the targets' own `visibility`. The edge asks `visibility` first (kept
 * per target until `channel` announces a change) and lets anyone in when it is "public"; otherwise a visitor
 * must be signed in (the edge's sign-in page) and `admits` decides (403 when not).
 */
export interface EdgeAccessPolicy {
  /** the owner kind whose targets it decides ("org") */
  ownerKind: Owner["kind"];
  /** NOTIFY channel announcing any change of what it decides on; the edge drops its cached decisions */
  channel: string;
  /** the target's visibility now ("public": no sign-in needed) */
  visibility(q: Queryable, target: EdgeTarget): Promise<string>;
  /** whether the signed-in account may see the target of that visibility */
  admits(q: Queryable, target: EdgeTarget, visibility: string, accountId: string): Promise<boolean>;
  /** the same visibility with what decided it, for the owning area's views (GET /v1/static/{slug}) */
  explain(q: Queryable, target: Pick<EdgeTarget, "kind" | "id" | "owner">): Promise<VisibilityInForce>;
  /**
   * Visitors without a platform account (partner site locks: people the partner vouched for, with a cookie of their
   * own): every request for the policy's targets is decided here instead of the sign-in page and `admits`.
   */
  visitors?: EdgeVisitorGate;
}

/** What a visitor gate answers: a redirect may set headers (a cookie) too. */
export type EdgeVerdict =
  | { kind: "allow" }
  | { kind: "deny"; status: number; title: string; message: string }
  | { kind: "redirect"; location: string; headers?: Record<string, string> };

/** The request as a visitor gate sees it: the absolute URL asked for and the Cookie header. */
export interface EdgeVisitorRequest {
  url: string;
  cookies: string | undefined;
}

export interface EdgeVisitorGate {
  /** the decision for a request to a target whose visibility (the policy's, "public" too) is given */
  decide(q: Queryable, target: EdgeTarget, visibility: string, request: EdgeVisitorRequest): Promise<EdgeVerdict>;
  /** what that decision depends on beyond target and visibility, for the edge's decision cache (null: not kept) */
  key(target: EdgeTarget, visibility: string, request: EdgeVisitorRequest): string | null;
}

/** A target's visibility as the edge enforces it, and where it comes from. */
export interface VisibilityInForce {
  visibility: string;
  /** site: its own setting; organization_default: it has none; organization_maximum: capped by the maximum */
  source: "site" | "organization_default" | "organization_maximum";
  /** the target's own setting (null: none), shown beside the one in force when a maximum caps it */
  own: string | null;
}

/** What sees the edge's answered requests (kernel contribution "edgeAccessLog"); `record` returns at once. */
export interface EdgeAccessLogSink {
  record(o: EdgeObservation): void;
  /**
   * Whether the sink wants a target's lines: nginx then leaves its requests to the Node edge, which sees each one
   * (README "The nginx data plane"). Absent: every target's.
   */
  wants?(target: EdgeTarget): boolean;
  /** calls `listener` whenever what `wants` answers may have changed (nginx drops the routes it holds) */
  onChange?(listener: () => void): void;
}

/** One answered request, as the edge reports it to its statistics and access-log sinks. */
export interface EdgeObservation {
  host: string;
  target: EdgeTarget | null;
  status: number;
  ms: number;
  /** bytes written to the visitor for this answer, headers included */
  bytes: number;
  /** nginx forwarded the request and counts the answer's statistics itself (this edge's bytes are not the visitor's) */
  readonly viaNginx?: boolean;
  /** the request line and the visitor, for access logs (log drains) */
  readonly method?: string;
  readonly path?: string;
  readonly socket?: { remoteAddress?: string };
  readonly userAgent?: string;
}
