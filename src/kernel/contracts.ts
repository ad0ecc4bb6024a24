/** What areas hand the kernel: jobs, metering sources, lifecycle hooks, admission checks, instance lookups. */
import type { Queryable } from "../store/db.js";
import type { Resource } from "../auth/scopes.js";
import type { Principal } from "../auth/principal.js";
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

/**
 * What an area tells billing about its resources. Billing never reads an area's tables: it asks the
 * source, keyset-paged in (owner, id) order so one owner's resources come together.
 */
export interface MeteringSource {
  kind: string;
  /** resources running or keeping data now, created before `createdBefore`, after `after` in (ownerKey, id) order */
  billable(
    q: Queryable,
    page: { createdBefore: Date; after: [string, string] | null; limit: number },
  ): Promise<MeteredResource[]>;
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

/**
 * Who may run which image. The registry area decides (an owner runs images of its own namespace and
 * public images, never another owner's namespace) and hands back pull credentials for its registry.
 * Without a registry area every image is allowed and pulled anonymously.
 */
export interface ImageAccess {
  /** throws ApiError bad_image / image_forbidden; returns credentials when the image needs them */
  pullFor(owner: Owner, image: string): Promise<{ username: string; password: string } | null>;
  /**
   * Push and pull credentials for one repository (a name under the owner's namespace) of the platform's own
   * registry, minted for the platform's builder and never shown to users; throws 503 registry_unavailable.
   * Absent: no registry to push to.
   */
  pushFor?(owner: Owner, repository: string): Promise<PushCredentials>;
}

export interface PushCredentials {
  /** 127.0.0.1:<port> of the registry */
  registry: string;
  namespace: string;
  username: string;
  password: string;
  /** when the credentials stop working */
  expires_at?: Date;
}

/** An app a build can roll to its image: a pod, or a pod group (every member). */
export interface AppRef {
  kind: "pod" | "group";
  id: string;
  slug: string;
}

/**
 * The apps side of builds (the apps area sets it): finding the caller's pod or pod group by id or slug, and
 * rolling it to a new image the way `PATCH {image}` does (a rolling update; errors are ApiErrors).
 */
export interface AppImages {
  find(p: Principal, ref: string): Promise<AppRef | null>;
  deploy(p: Principal, app: AppRef, image: string): Promise<void>;
  /** what the app runs now (organizations' GitOps manifests, src/orgs/gitlab); null when it is gone */
  describe?(p: Principal, app: AppRef): Promise<AppSpec | null>;
  /** a pod group's replica bounds, as `PATCH /v1/pod-groups/{id} {replica_min, replica_max}` (GitOps auto-sync) */
  scale?(p: Principal, app: AppRef, bounds: { min: number; max: number }): Promise<void>;
}

/** An app's deployable spec as GitOps manifests show it: a pod has 1 replica; a group its bounds. */
export interface AppSpec {
  image: string;
  size: string;
  port: number | null;
  replicaMin: number;
  replicaMax: number;
  /** a group's autoscaling target; null for a pod */
  targetCpuPercent: number | null;
}

/** A base image a build pulled, with the manifest digest its registry named just before the pull (null: unknown). */
export interface BuildBaseImage {
  image: string;
  digest: string | null;
}

/** A build that has ended, as the builds area tells its observers (base-image refresh, issue 14). */
export interface EndedBuild {
  id: string;
  owner: Owner;
  /** the account that created it */
  accountId: string;
  app: AppRef | null;
  status: "succeeded" | "failed" | "cancelled";
  /** the pushed image and its manifest digest (null when it was not pushed) */
  image: string | null;
  digest: string | null;
  baseImages: BuildBaseImage[];
}

/**
 * Told of every build's end (kernel.addBuildObserver). Answering true for a succeeded build that named an app keeps
 * its source on the build host for `Rebuilds.rebuild` (the newest kept build of an app replaces older ones).
 */
export interface BuildObserver {
  ended(build: EndedBuild): Promise<boolean | void>;
}

/** The builds area's services for others (kernel.rebuilds): base-image digests, rebuilds of a kept source. */
export interface Rebuilds {
  /** the manifest digest the image's registry names now, with the owner's pull access; null: not in a registry */
  digestOf(owner: Owner, image: string): Promise<string | null>;
  /**
   * A new build of a kept source (same Dockerfile, context and app, base images pulled again), queued on the source's
   * host and rolled to its app on success. 409 conflict when the source is no longer kept; the build's admission runs.
   */
  rebuild(p: Principal, buildId: string): Promise<{ id: string; tag: string }>;
  /** the builder this platform runs builds with */
  builder(): Promise<{ name: string; version: string | null; available: boolean; problem: string | null }>;
}

/** An app attached to a resource (a pod using a database), as the apps area reports it. */
export interface AttachedApp {
  kind: string;
  id: string;
  name: string;
  slug: string | null;
  state: string;
}

/**
 * A resource apps attach to (databases): what an attached app is given. The apps area asks it when a
 * pod names the resource; the resource's area never reads the apps' tables.
 */
export interface Attachable {
  resource: Resource;
  /** the environment an attached app gets (DATABASE_URL), or null when the owner has no such instance */
  resolve(q: Queryable, owner: Owner, ref: string): Promise<{ id: string; env: Record<string, string> } | null>;
}

/** The apps side of attachments: which apps use a resource, and rolling them when its credentials change. */
export interface AttachmentConsumer {
  attachedTo(q: Queryable, resource: Resource, id: string): Promise<AttachedApp[]>;
  /** rolls every app attached to the resource so it picks up new credentials; returns the app ids */
  refresh(q: Queryable, resource: Resource, id: string): Promise<string[]>;
  /** source networks (CIDR) the owner's apps connect from, so an allowlist can always admit them */
  sourceCidrs(q: Queryable, owner: Owner): Promise<string[]>;
}

/** What the edge serves for one host name: upstream replicas (or files) and the access rule. */
export interface EdgeTarget {
  kind: string;
  id: string;
  owner: Owner;
  /** 127.0.0.1:<port> (or host:port) of every healthy replica; empty: none healthy now (503) */
  upstreams: string[];
  /**
   * public: anyone; owner-only: a signed-in member of the owner. An owner kind with an access policy
   * (kernel.edgeAccess: organizations) is decided by that policy instead, whatever this says.
   */
  visibility: "public" | "owner-only";
  /** the account responsible for it (its creator, or who took it over): organization visibility reads it */
  accountId?: string;
  /** a static site: the edge serves the files of its live deployment (null: nothing finalized yet, 503) */
  site?: StaticSiteTarget;
}

export interface StaticSiteTarget {
  deploymentId: string | null;
  /** unknown paths without an extension answer /index.html (single-page apps) */
  spa: boolean;
  /** a file of the deployment answered with 404 for unknown paths (e.g. "404.html"), or null: the edge's page */
  notFoundPage: string | null;
}

/** One file of a static deployment; `hash` (sha256 hex) names its content, shared between deployments. */
export interface StaticFileEntry {
  hash: string;
  size: number;
  contentType: string;
}

/**
 * The files of static sites, for the edge (the static area sets it). A finalized deployment never changes and a
 * hash always names the same bytes, so the edge caches both without invalidation.
 */
export interface StaticFiles {
  /** every file of a deployment by path ("index.html", "assets/app.js"); empty for an unknown deployment */
  manifest(q: Queryable, deploymentId: string): Promise<Map<string, StaticFileEntry>>;
  /** the bytes of one file content, or null when no such content is stored */
  content(q: Queryable, hash: string): Promise<Buffer | null>;
  /**
   * Makes a finalized deployment of the caller's site live again, as `POST /v1/static/{slug}/rollback` (ApiErrors
   * as there); organizations' GitOps auto-sync. Optional.
   */
  rollback?(p: Principal, site: string, deploymentId: string): Promise<void>;
}

/**
 * Host names outside the apps domain (custom domains): the app slug a verified host serves, then resolved by the
 * route sources like <slug>.<APPS_DOMAIN>. `channel` announces changes (verification, deletion).
 */
export interface EdgeHostSource {
  channel: string;
  appSlug(q: Queryable, host: string): Promise<string | null>;
}

/** The certificates area, for the edge's HTTPS listener and the areas that add host names (custom domains). */
export interface TlsCertificates {
  /** NOTIFY channel announcing a stored or renewed certificate */
  channel: string;
  /** asks for a certificate for host; idempotent, issued by a job (ACME) */
  request(q: Queryable, host: string): Promise<void>;
  /** the current certificate and key (PEM) for host, or null */
  load(q: Queryable, host: string): Promise<{ certPem: string; keyPem: string; notAfter: Date } | null>;
  /** the key authorization for an ACME HTTP-01 token, or null (served at /.well-known/acme-challenge/<token>) */
  challenge(q: Queryable, token: string): Promise<string | null>;
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

/**
 * The installation's own license (on-premises edition, LICENSE_FILE), as `/v1/edition` reports it; `valid` is
 * computed at each call (a license expires while the platform runs).
 */
export interface EditionLicense {
  license_id: string;
  customer: string;
  hosts: number;
  not_after: string;
  valid: boolean;
}
