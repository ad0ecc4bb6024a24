/**
 * What every area hands the kernel the same way (jobs, metering sources, lifecycle hooks, admission checks, instance
 * lookups), and the contracts the kernel itself calls across areas: edge route sources, owner policies, the mailer.
 * One area's services for another are capabilities (capabilities.ts), each typed in its area's contract.ts.
 */
import type { Queryable } from "../store/db.js";
import type { Resource } from "../auth/scopes.js";
import type { JobDefinition } from "../jobs/queue.js";
import type { Owner } from "./owner.js";

/** A job an area runs; with `cron` (UTC) it is also scheduled periodically. */
export interface JobSpec<T = Record<string, unknown>> extends JobDefinition<T> {
  cron?: string;
}

/** A resource holding billable capacity in a metering interval, as its area reports it to billing. */
export interface MeteredResource {
  id: string;
  owner: Owner;
  /** the account that created it, for per-member usage reports */
  accountId: string;
  /** price catalog entry: catalog/prices.json resources.<kind>.sizes.<size> */
  kind: string;
  size: string;
  storageGb: number;
  /** running pays the instance price; running or paused keep data and pay storage */
  state: "running" | "paused";
}

/** One page of billing's walk over an area's resources: created before, after (owner key, id) in that order. */
export interface MeteringPage {
  createdBefore: Date;
  after: [string, string] | null;
  limit: number;
}

/**
 * What an area tells billing about its resources. Billing never reads an area's tables: it asks the
 * source, keyset-paged in (owner, id) order so one owner's resources come together.
 */
export interface MeteringSource {
  kind: string;
  /** resources running or keeping data now, created before `createdBefore`, after `after` in (ownerKey, id) order */
  billable(q: Queryable, page: MeteringPage): Promise<MeteredResource[]>;
  /** one owner's billable resources now, for the burn rate */
  billableOf(q: Queryable, owner: Owner): Promise<MeteredResource[]>;
  /** names of the given resources (for usage reports), by id */
  describe?(q: Queryable, ids: string[]): Promise<Map<string, { name: string; slug: string | null }>>;
}

/**
 * How an area pauses and resumes an owner's paid resources when billing says so (overdue, budgets,
 * spend caps). `reason` is shown to the user; resume only touches what a pause with the same reason did.
 */
export interface Lifecycle {
  pause(q: Queryable, owner: Owner, reason: string): Promise<string[]>;
  resume(q: Queryable, owner: Owner, reason: string): Promise<string[]>;
  /**
   * The same for one member's company assets (those whose creator is `accountId`): suite billing's stop-on-exhausted.
   * Optional: an area without it keeps that member's resources running.
   */
  pauseMember?(q: Queryable, owner: Owner, accountId: string, reason: string): Promise<string[]>;
  resumeMember?(q: Queryable, owner: Owner, accountId: string, reason: string): Promise<string[]>;
}

/** Finds one of the area's instances by id or slug within an owner, for instance-limited keys. */
export interface InstanceLookup {
  resource: Resource;
  /**
   * `covers`: refs of what contains the instance (a pod's group id and slug): permitting those permits it.
   * `kind`: which kind of instance, when one resource has several (pods: "pod" or "group", as EdgeTarget.kind).
   * `accountId`: the member responsible for it (its creator), for the change check on company assets
   * (kernel.assertMayChange); a lookup without it leaves the area's instances unchecked.
   */
  find(
    owner: Owner,
    ref: string,
  ): Promise<{ id: string; slug: string | null; covers?: string[]; kind?: string; accountId?: string } | null>;
}

/** What a creation path asks admission: who will own it, what kind, which size. */
export interface AdmissionRequest {
  owner: Owner;
  /** the account acting (for budgets and rules that apply per member) */
  accountId: string;
  kind: string;
  size: string;
  storageGb?: number;
  /**
   * growth of something already running (an autoscaled group adding a member), not a creation the user
   * asked for: refused with 402 spend_cap_reached once the account or app spend cap is reached
   */
  growth?: boolean;
  /** the app that grows (a pod group's id) */
  resourceId?: string;
  /** the resources whose metered usage is that app's spend (a group's member pods, past ones too); default [resourceId] */
  meteredIds?: string[];
  /**
   * What organization deploy rules and department deploy blocks look at (absent: not applicable to the kind).
   * `update`: a new deployment or code/image change of an existing resource (a deploy block stops those too).
   */
  update?: boolean;
  image?: string;
  region?: string;
  gpu?: number;
  replicas?: number;
  /** features the request turns on: "ha", "pooling", "autoscale", "volume", "network" ... */
  features?: string[];
  /** what deploy rules call it when that is not `kind` ("pod-group": a group and its members, admitted as kind pod) */
  shape?: string;
  /**
   * the app (a pod group's id) whose own request was admitted before and this is a replica of (a member made as the
   * group converges): deploy rules and department blocks judged the app, budgets and funds still apply
   */
  partOf?: string;
  /**
   * app instances an existing resource sets running again (a stopped pod's start: 1), for concurrent-run limits
   * (partner departments); creations of a pod (or a group's member, or growth) count 1 without it
   */
  starts?: number;
}

/** A check that may refuse a creation by throwing an ApiError (402 insufficient_funds, 403 deploy_rule_violation, ...). */
export type AdmissionCheck = (q: Queryable, request: AdmissionRequest) => Promise<void>;

/** What the edge serves for one host name: upstream replicas (or files) and the access rule. */
export interface EdgeTarget {
  kind: string;
  id: string;
  owner: Owner;
  /** 127.0.0.1:<port> (or host:port) of every healthy replica; empty: none healthy now (503) */
  upstreams: string[];
  /**
   * public: anyone; owner-only: a signed-in member of the owner. An owner kind with an access policy
   * (edge access policies: organizations) is decided by that policy instead, whatever this says.
   */
  visibility: "public" | "owner-only";
  /** the account responsible for it (its creator, or who took it over): organization visibility reads it */
  accountId?: string;
  /** a static site: the edge serves the files of its live deployment (null: nothing finalized yet, 503) */
  site?: StaticSiteTarget;
  /**
   * Scale-to-zero (issue 30): "stopped", the app was stopped for idleness and the edge asks `edgeWake` to start it,
   * holding the request; "starting", a wake's start is under way and the edge holds the request until a replica is
   * ready. Absent: not asleep.
   */
  idle?: "stopped" | "starting";
}

export interface StaticSiteTarget {
  deploymentId: string | null;
  /** unknown paths without an extension answer /index.html (single-page apps) */
  spa: boolean;
  /** a file of the deployment answered with 404 for unknown paths (e.g. "404.html"), or null: the edge's page */
  notFoundPage: string | null;
}

/**
 * An area whose resources the edge serves (apps now, static sites later). `channel` is the NOTIFY channel its
 * route changes are announced on, so every edge process drops what it cached within a second.
 */
export interface EdgeRouteSource {
  channel: string;
  /** the target for a label under the apps domain (<slug>.<APPS_DOMAIN>), or null */
  resolve(q: Queryable, slug: string): Promise<EdgeTarget | null>;
}

/** A company asset about to change, as the change-permission check names it to the caller. */
export interface ManagedAsset {
  /** what it is, for the message: `bucket "logs"`, `static site "docs"` */
  label: string;
  /** the member responsible for it (its creator); null for a change that reaches every company asset of a kind */
  accountId: string | null;
}

/**
 * What the area that knows one kind of owner decides for everyone (organizations for "org"), contributed as
 * "ownerPolicies": whose wallet pays and who may change its assets. Owners of a kind without a policy pay for
 * themselves, and their actors change everything they own.
 */
export interface OwnerPolicy {
  ownerKind: Owner["kind"];
  /**
   * Whose wallet pays an owner's usage: an organization in `personal` billing mode has each company asset paid by
   * the member who created it (`accountId`); `prepaid` (and later card and suite) organizations pay themselves.
   */
  payer(q: Queryable, owner: Owner, accountId: string): Promise<Owner>;
  /**
   * Refuses (403 forbidden_role) a change to a company asset by an account that may not manage it: members manage
   * only what they are responsible for (`asset.accountId`; null: every company asset at once), admins and the owner
   * everything, members everything when the organization's `members_manage_all_assets` is on (kernel.assertMayManage).
   */
  assertMayManage(q: Queryable, ownerId: string, accountId: string, asset: ManagedAsset): Promise<void>;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Outgoing mail (SMTP through nodemailer, or the log when SMTP_URL is unset). */
export interface Mailer {
  /** whether mail really leaves this platform (false: only logged; callers then show links in their answers) */
  readonly delivers: boolean;
  send(message: MailMessage): Promise<void>;
}

/** One resource as its area reports it for the company-asset views and ownership moves. */
export interface OwnedResource {
  /** pod | pod-group | site | database | volume | bucket */
  kind: string;
  id: string;
  name: string;
  slug: string | null;
  owner: Owner;
  /** the creator (the member responsible for a company asset) */
  accountId: string;
  state: string;
  createdAt: Date;
}

/**
 * An area's resources for organizations (contribution "owned"): listing an owner's, finding one by id, and moving some
 * to another owner and creator. `reassign` runs in the caller's transaction and announces the change the way the
 * area's own writes do (edge routes, owner caches), so the edge and lists follow at commit.
 */
export interface OwnedResources {
  kind: string;
  list(q: Queryable, owner: Owner): Promise<OwnedResource[]>;
  /** by id (or slug where the kind has one), whoever owns it; deleted resources are not found */
  find(q: Queryable, ref: string): Promise<OwnedResource | null>;
  reassign(q: Queryable, ids: string[], to: { owner: Owner; accountId: string }): Promise<void>;
  /**
   * Resources tied to `ref` (of any kind, this source's or another's) that must keep one owner with it: a pod's
   * attached databases and volumes, a database's apps. A designation moves the tied ones along. Optional.
   */
  ties?(q: Queryable, ref: { kind: string; id: string }): Promise<{ kind: string; id: string }[]>;
}
