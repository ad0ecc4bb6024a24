import type { Queryable } from "../store/db.js";
import type { Resource } from "../auth/scopes.js";
import type {
  AdmissionCheck,
  AdmissionRequest,
  InstanceLookup,
  Lifecycle,
  Mailer,
  ManagedAsset,
  MeteringSource,
  OwnerPolicy,
} from "./contracts.js";
import { CapabilityRegistry } from "./capabilities.js";
import type { Owner } from "./owner.js";
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
  "alert-rules": "alert rule",
};

/**
 * The registries areas fill at start-up and everyone else reads: billing meters every source and pauses
 * owners through every lifecycle; every creation path goes through `admit`; instance-limited keys are
 * checked through the lookups; one area's services for another are capabilities (capabilities.ts). No area
 * reaches another area's tables; they meet here.
 */
export class Kernel extends CapabilityRegistry {
  readonly metering: MeteringSource[] = [];
  readonly lifecycles: { area: string; lifecycle: Lifecycle }[] = [];
  private readonly admissionChecks: AdmissionCheck[] = [];
  private readonly lookups = new Map<Resource, InstanceLookup>();
  private mail: Mailer | null = null;

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

  /**
   * Pods, pod groups and static sites share <slug>.<APPS_DOMAIN>. Inside the creating transaction: takes the
   * slug's lock (held to commit, so two areas cannot claim it at once) and says whether a route source other
   * than `ownChannel` already serves it (the area checks its own tables, with its own unique index).
   */
  async appSlugTakenElsewhere(tx: Queryable, slug: string, ownChannel: string): Promise<boolean> {
    await xactLock(tx, `app-slug:${slug}`);
    for (const source of this.all("edgeRoutes")) {
      if (source.channel !== ownChannel && (await source.resolve(tx, slug))) return true;
    }
    return false;
  }

  setMailer(mailer: Mailer): void {
    this.mail = mailer;
  }

  /** outgoing mail (src/mail: SMTP, or the log without SMTP_URL) */
  get mailer(): Mailer {
    if (!this.mail) throw new Error("no mailer set");
    return this.mail;
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

  /** Pauses one member's paid company assets (their creator is `accountId`) in every area that can; the ids paused. */
  async pauseMember(q: Queryable, owner: Owner, accountId: string, reason: string): Promise<string[]> {
    const ids: string[] = [];
    for (const { lifecycle } of this.lifecycles)
      if (lifecycle.pauseMember) ids.push(...(await lifecycle.pauseMember(q, owner, accountId, reason)));
    return ids;
  }

  /** Resumes what a member pause with the same reason did. */
  async resumeMember(q: Queryable, owner: Owner, accountId: string, reason: string): Promise<string[]> {
    const ids: string[] = [];
    for (const { lifecycle } of this.lifecycles)
      if (lifecycle.resumeMember) ids.push(...(await lifecycle.resumeMember(q, owner, accountId, reason)));
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

  /** the policy of an owner kind (organizations: "org"), or null: its owners pay and change what is theirs */
  private ownerPolicy(kind: Owner["kind"]): OwnerPolicy | null {
    return this.all("ownerPolicies").find((p) => p.ownerKind === kind) ?? null;
  }

  /** Whose wallet pays an owner's usage (OwnerPolicy.payer); the owner itself without a policy for its kind. */
  async payer(q: Queryable, owner: Owner, accountId: string): Promise<Owner> {
    const policy = this.ownerPolicy(owner.kind);
    return policy ? policy.payer(q, owner, accountId) : owner;
  }

  /**
   * The one permission check before a change to a company asset (issue 34): members change and delete only what they
   * are responsible for, admins and the owner everything (OwnerPolicy.assertMayManage). Reads never ask. Personal
   * owners (and platforms without organizations) pass: their resources are all their own.
   */
  async assertMayManage(q: Queryable, actor: { owner: Owner; accountId: string }, asset: ManagedAsset): Promise<void> {
    const policy = this.ownerPolicy(actor.owner.kind);
    if (!policy) return;
    if (asset.accountId === actor.accountId) return;
    await policy.assertMayManage(q, actor.owner.id, actor.accountId, asset);
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
    if (!this.ownerPolicy(actor.owner.kind)) return;
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
