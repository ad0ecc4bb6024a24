import type { Queryable } from "../store/db.js";
import type { Resource } from "../auth/scopes.js";
import type {
  AdmissionCheck,
  AdmissionRequest,
  AppImages,
  Attachable,
  AttachmentConsumer,
  BuildObserver,
  EdgeAccessPolicy,
  EditionLicense,
  EdgeHostSource,
  EdgeRouteSource,
  ImageAccess,
  InstanceLookup,
  Lifecycle,
  MeteringSource,
  Rebuilds,
  StaticFiles,
  TlsCertificates,
} from "./contracts.js";
import type { Owner } from "./owner.js";
import type { ExternalHosts, Hosts } from "./hosts.js";
import type { ManagedAsset, Mailer, OrgDirectory, OwnedResources, UsageTotals } from "./orgs.js";
import { xactLock } from "../store/locks.js";

/** resource names as one instance is called in messages */
const SINGULAR: Partial<Record<Resource, string>> = {
  pods: "pod",
  databases: "database",
  volumes: "volume",
  static: "static site",
  "pod-templates": "pod template",
  domains: "domain",
  sandboxes: "sandbox",
  buckets: "bucket",
  registry: "repository",
  builds: "build",
};

/**
 * The registries areas fill at start-up and everyone else reads: billing meters every source and pauses
 * owners through every lifecycle; every creation path goes through `admit`; instance-limited keys are
 * checked through the lookups. No area reaches another area's tables; they meet here.
 */
export class Kernel {
  readonly metering: MeteringSource[] = [];
  readonly lifecycles: { area: string; lifecycle: Lifecycle }[] = [];
  private readonly admissionChecks: AdmissionCheck[] = [];
  private readonly lookups = new Map<Resource, InstanceLookup>();
  private hostsRegistry: Hosts | null = null;
  private externalHostsSource: ExternalHosts | null = null;
  private readonly attachables = new Map<Resource, Attachable>();
  private consumer: AttachmentConsumer | null = null;
  private images: ImageAccess = { pullFor: async () => null };
  /** what the edge serves, per area (apps, static sites) */
  readonly edgeRoutes: EdgeRouteSource[] = [];
  /** host names outside the apps domain (custom domains) */
  readonly edgeHosts: EdgeHostSource[] = [];
  /** who may see the targets of some owner kinds (organizations), read by the edge at its setup */
  readonly edgeAccess: EdgeAccessPolicy[] = [];
  private files: StaticFiles | null = null;
  private certs: TlsCertificates | null = null;
  private apps: AppImages | null = null;
  /** told of every build's end (organizations' base-image refresh) */
  readonly buildObservers: BuildObserver[] = [];
  private rebuildService: Rebuilds | null = null;
  private directory: OrgDirectory | null = null;
  private usageTotals: UsageTotals | null = null;
  private mail: Mailer | null = null;
  private license: (() => EditionLicense) | null = null;
  /** every area's resources for company-asset views and ownership moves (organizations) */
  readonly owned: OwnedResources[] = [];

  /** This process's host, placement and host liveness (set by the hosts area at its setup). */
  get hosts(): Hosts {
    if (!this.hostsRegistry) throw new Error("no hosts area in this platform");
    return this.hostsRegistry;
  }

  setHosts(hosts: Hosts): void {
    if (this.hostsRegistry) throw new Error("two hosts registries");
    this.hostsRegistry = hosts;
  }

  /** organization external hosts (set by the organizations area); placement asks them for host_id / host_labels */
  setExternalHosts(hosts: ExternalHosts): void {
    this.externalHostsSource = hosts;
  }

  get externalHosts(): ExternalHosts | null {
    return this.externalHostsSource;
  }

  addMetering(source: MeteringSource): void {
    if (this.metering.some((s) => s.kind === source.kind)) throw new Error(`two metering sources for ${source.kind}`);
    this.metering.push(source);
  }

  addLifecycle(area: string, lifecycle: Lifecycle): void {
    this.lifecycles.push({ area, lifecycle });
  }

  addAdmission(check: AdmissionCheck): void {
    this.admissionChecks.push(check);
  }

  /** the registry area sets who may pull which image; the default allows every image anonymously */
  setImageAccess(access: ImageAccess): void {
    this.images = access;
  }

  get imageAccess(): ImageAccess {
    return this.images;
  }

  addEdgeRoutes(source: EdgeRouteSource): void {
    this.edgeRoutes.push(source);
  }

  addEdgeHosts(source: EdgeHostSource): void {
    this.edgeHosts.push(source);
  }

  addEdgeAccess(policy: EdgeAccessPolicy): void {
    if (this.edgeAccess.some((p) => p.ownerKind === policy.ownerKind))
      throw new Error(`two edge access policies for ${policy.ownerKind}`);
    this.edgeAccess.push(policy);
  }

  /**
   * Pods, pod groups and static sites share <slug>.<APPS_DOMAIN>. Inside the creating transaction: takes the
   * slug's lock (held to commit, so two areas cannot claim it at once) and says whether a route source other
   * than `ownChannel` already serves it (the area checks its own tables, with its own unique index).
   */
  async appSlugTakenElsewhere(tx: Queryable, slug: string, ownChannel: string): Promise<boolean> {
    await xactLock(tx, `app-slug:${slug}`);
    for (const source of this.edgeRoutes) {
      if (source.channel !== ownChannel && (await source.resolve(tx, slug))) return true;
    }
    return false;
  }

  setStaticFiles(files: StaticFiles): void {
    this.files = files;
  }

  /** the static area's files; null without that area */
  get staticFiles(): StaticFiles | null {
    return this.files;
  }

  setCertificates(certs: TlsCertificates): void {
    this.certs = certs;
  }

  /** the certificates area; null without it (the edge then serves plain HTTP only) */
  get certificates(): TlsCertificates | null {
    return this.certs;
  }

  setAppImages(apps: AppImages): void {
    this.apps = apps;
  }

  /** the apps area's pods and groups, for builds that deploy; null without that area */
  get appImages(): AppImages | null {
    return this.apps;
  }

  addBuildObserver(observer: BuildObserver): void {
    this.buildObservers.push(observer);
  }

  setRebuilds(rebuilds: Rebuilds): void {
    this.rebuildService = rebuilds;
  }

  /** the builds area's digests and rebuilds; null without that area */
  get rebuilds(): Rebuilds | null {
    return this.rebuildService;
  }

  setOrgs(directory: OrgDirectory): void {
    this.directory = directory;
  }

  /** the organizations area; null without it (then every owner is a personal account or a partner child) */
  get orgs(): OrgDirectory | null {
    return this.directory;
  }

  /** Whose wallet pays an owner's usage (kernel/orgs.ts, OrgDirectory.payer); the owner itself without organizations. */
  async payer(q: Queryable, owner: Owner, accountId: string): Promise<Owner> {
    return owner.kind === "org" && this.directory ? this.directory.payer(q, owner, accountId) : owner;
  }

  addOwned(source: OwnedResources): void {
    if (this.owned.some((s) => s.kind === source.kind))
      throw new Error(`two owned-resource sources for ${source.kind}`);
    this.owned.push(source);
  }

  setUsageTotals(totals: UsageTotals): void {
    this.usageTotals = totals;
  }

  /** billing's usage totals; null without a billing area */
  get usage(): UsageTotals | null {
    return this.usageTotals;
  }

  setMailer(mailer: Mailer): void {
    this.mail = mailer;
  }

  /** outgoing mail (src/mail: SMTP, or the log without SMTP_URL) */
  get mailer(): Mailer {
    if (!this.mail) throw new Error("no mailer set");
    return this.mail;
  }

  /** the on-premises area sets the installation's verified license (EDITION=onprem with LICENSE_FILE) */
  setEditionLicense(current: () => EditionLicense): void {
    this.license = current;
  }

  /** the installation's license as /v1/edition shows it; null without one */
  get editionLicense(): EditionLicense | null {
    return this.license ? this.license() : null;
  }

  addAttachable(source: Attachable): void {
    this.attachables.set(source.resource, source);
  }

  attachable(resource: Resource): Attachable | null {
    return this.attachables.get(resource) ?? null;
  }

  setAttachmentConsumer(consumer: AttachmentConsumer): void {
    this.consumer = consumer;
  }

  /** the apps side of attachments; without an apps area nothing is ever attached */
  get attachments(): AttachmentConsumer {
    return (
      this.consumer ?? {
        attachedTo: async () => [],
        refresh: async () => [],
        sourceCidrs: async () => [],
      }
    );
  }

  addInstances(lookup: InstanceLookup): void {
    this.lookups.set(lookup.resource, lookup);
  }

  /**
   * Every creation and paid update calls this with what it is about to create; a check refuses by
   * throwing an ApiError (402 insufficient_funds, later budgets, deploy rules, partner limits).
   */
  async admit(q: Queryable, request: AdmissionRequest): Promise<void> {
    for (const check of this.admissionChecks) await check(q, request);
  }

  /** Pauses an owner's paid resources in every area; returns the ids paused. */
  async pauseOwner(q: Queryable, owner: Owner, reason: string): Promise<string[]> {
    const ids: string[] = [];
    for (const { lifecycle } of this.lifecycles) ids.push(...(await lifecycle.pause(q, owner, reason)));
    return ids;
  }

  /** Resumes what a pause with the same reason did. */
  async resumeOwner(q: Queryable, owner: Owner, reason: string): Promise<string[]> {
    const ids: string[] = [];
    for (const { lifecycle } of this.lifecycles) ids.push(...(await lifecycle.resume(q, owner, reason)));
    return ids;
  }

  /** The owner's instance named by ref (id or slug) in another area, or null (no lookup, or not the owner's). */
  async findInstance(
    resource: Resource,
    owner: Owner,
    ref: string,
  ): Promise<{ id: string; slug: string | null; covers?: string[]; kind?: string } | null> {
    const lookup = this.lookups.get(resource);
    return lookup ? lookup.find(owner, ref) : null;
  }

  /**
   * The one permission check before a change to a company asset (issue 34): members change and delete only what they
   * are responsible for, admins and the owner everything (kernel/orgs.ts, OrgDirectory.assertMayManage). Reads never
   * ask. Personal owners (and platforms without organizations) pass: their resources are all their own.
   */
  async assertMayManage(q: Queryable, actor: { owner: Owner; accountId: string }, asset: ManagedAsset): Promise<void> {
    if (actor.owner.kind !== "org" || !this.directory) return;
    if (asset.accountId === actor.accountId) return;
    await this.directory.assertMayManage(q, actor.owner.id, actor.accountId, asset);
  }

  /**
   * assertMayManage for the actor's instance named by ref (id or slug), found through the area's instance lookup:
   * called by the HTTP layer for every write route naming an instance, and by services for instances a body names.
   * An unknown ref passes (the route answers its own 404).
   */
  async assertMayChange(
    q: Queryable,
    resource: Resource,
    actor: { owner: Owner; accountId: string },
    ref: string,
  ): Promise<void> {
    if (actor.owner.kind !== "org" || !this.directory) return;
    const found = await this.lookups.get(resource)?.find(actor.owner, ref);
    if (!found?.accountId) return;
    const what = found.kind === "group" ? "pod group" : (SINGULAR[resource] ?? resource);
    const label = `${what} "${found.slug ?? found.id}"`;
    await this.assertMayManage(q, actor, { label, accountId: found.accountId });
  }

  /** True when the instance named by ref is one of the permitted refs, matching by id or slug. */
  async permits(resource: Resource, owner: Owner, ref: string, permitted: string[]): Promise<boolean> {
    if (permitted.includes(ref)) return true;
    const lookup = this.lookups.get(resource);
    if (!lookup) return false;
    const found = await lookup.find(owner, ref);
    if (!found) return false;
    const refs = [found.id, ...(found.slug !== null ? [found.slug] : []), ...(found.covers ?? [])];
    return refs.some((r) => permitted.includes(r));
  }
}
