/**
 * What the apps area provides the others: its pods and groups for builds (capability "appImages"), the apps side of
 * attachments ("attachments"), and the point where resources apps attach to are offered ("attachables").
 */
import type { Queryable } from "../store/db.js";
import type { Resource } from "../auth/scopes.js";
import type { Principal } from "../auth/principal.js";
import type { Owner } from "../kernel/owner.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    appImages: AppImages;
    /** without an apps area nothing is ever attached */
    attachments: AttachmentConsumer;
    /**
     * Scale-to-zero (issue 30, src/apps/idle): starts an app the edge found idle-stopped (EdgeTarget.idle), with
     * the admission a start has (funds, budgets, partner quotas, department limits). Idempotent across edge
     * processes: the first records the start in the store, later ones find it under way.
     */
    edgeWake: (target: { kind: string; id: string }) => Promise<EdgeWakeOutcome>;
  }
  interface Contributions {
    /** one per resource (databases) */
    attachables: Attachable;
  }
}

/** What a wake came to: started (or already under way), the app gone, or refused by admission with its words. */
export type EdgeWakeOutcome =
  { kind: "started" } | { kind: "gone" } | { kind: "refused"; status: number; code: string; message: string };

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
  /**
   * A pod's current release as a cron job takes it (issue 29): its image, release number, plain env and secret
   * env (values, for the job's container only, and what the API may show of them); null when the pod is gone.
   */
  releaseOf?(p: Principal, app: AppRef): Promise<AppRelease | null>;
  /** a pod group's replica bounds, as `PATCH /v1/pod-groups/{id} {replica_min, replica_max}` (GitOps auto-sync) */
  scale?(p: Principal, app: AppRef, bounds: { min: number; max: number }): Promise<void>;
  /** a new pod as `POST /v1/pods` makes it (admission, deploy rules, budgets); preview environments (src/previews) */
  createPod?(p: Principal, spec: NewPodSpec): Promise<AppRef>;
  /** the pod marked removed as `DELETE /v1/pods/{id}` does; nothing when it is gone already */
  removePod?(p: Principal, podId: string): Promise<void>;
}

/** A pod to create through `AppImages.createPod`: what a preview environment needs of `POST /v1/pods`. */
export interface NewPodSpec {
  name: string;
  slug: string;
  image: string;
  port: number | null;
  size: string;
  env: Record<string, string>;
  secretEnv: Record<string, string>;
  idleStopSeconds: number | null;
  /** databases attached as `POST /v1/pods {databases}` does (DATABASE_URL and PG* env; a preview's database branch) */
  databases?: string[];
}

export interface AppRelease {
  image: string;
  release: number;
  env: Record<string, string>;
  secretEnv: Record<string, string>;
  secretMeta: Record<string, { fingerprint: string; set_by: string; set_at: string }>;
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
