/**
 * Company apps as the syncs see them, only through the kernel (no other area's tables): the organization's pods, pod
 * groups and static sites from the areas' owned-resource sources, a site's live deployment from the edge's route
 * sources, a pod's or group's spec from the apps area (kernel.use("appImages").describe), and the changes auto-sync applies
 * (appImages.deploy / scale, staticFiles.rollback), made as the app's responsible member acting for the organization.
 */
import { createHash } from "node:crypto";
import { systemPrincipal, type Principal } from "../../auth/principal.js";
import { ApiError } from "../../http/errors.js";
import type { AppRef } from "../../apps/contract.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { Queryable } from "../../store/db.js";
import type { AppState, Desired } from "./manifest.js";
import type { AppKind } from "./repo.js";

export type AppsKernel = Pick<Kernel, "all" | "use">;

export interface OrgApp {
  kind: AppKind;
  id: string;
  slug: string;
  /** the responsible member: syncs that change the app act as them */
  accountId: string;
}

export const APP_KINDS: readonly AppKind[] = ["pod", "pod-group", "site"];

/** The organization's pods, pod groups and static sites (a group's member pods are the group's). */
export async function orgApps(q: Queryable, kernel: AppsKernel, orgId: string): Promise<OrgApp[]> {
  const out: OrgApp[] = [];
  for (const source of kernel.all("owned")) {
    if (!APP_KINDS.includes(source.kind as AppKind)) continue;
    for (const r of await source.list(q, { kind: "org", id: orgId })) {
      if (r.slug && r.state !== "removed")
        out.push({ kind: source.kind as AppKind, id: r.id, slug: r.slug, accountId: r.accountId });
    }
  }
  return out;
}

/** One app by kind and id, while it is still the organization's; null when removed or handed over. */
export async function orgApp(
  q: Queryable,
  kernel: AppsKernel,
  orgId: string,
  kind: AppKind,
  id: string,
): Promise<OrgApp | null> {
  const r = await kernel
    .all("owned")
    .find((s) => s.kind === kind)
    ?.find(q, id);
  if (!r || r.id !== id || r.owner.kind !== "org" || r.owner.id !== orgId || !r.slug || r.state === "removed")
    return null;
  return { kind, id: r.id, slug: r.slug, accountId: r.accountId };
}

/** The responsible member acting for the organization, with the audit row of what a sync changes. */
export function actor(orgId: string, app: OrgApp, action: string, requestId: string): Principal {
  return systemPrincipal({
    accountId: app.accountId,
    owner: { kind: "org", id: orgId },
    email: "",
    displayName: "GitLab sync",
    audit: { action, target: app.id, ip: "gitlab-sync", requestId, status: 200, written: false },
  });
}

const appRef = (app: OrgApp): AppRef => ({ kind: app.kind === "pod" ? "pod" : "group", id: app.id, slug: app.slug });

/** What the app runs now; null when it is gone (or this platform cannot tell: no apps or static area). */
export async function appState(q: Queryable, kernel: AppsKernel, orgId: string, app: OrgApp): Promise<AppState | null> {
  if (app.kind === "site") {
    for (const source of kernel.all("edgeRoutes")) {
      const t = await source.resolve(q, app.slug);
      if (t?.site && t.id === app.id) return { kind: "site", deploymentId: t.site.deploymentId };
    }
    return null;
  }
  const describe = kernel.use("appImages")?.describe;
  if (!describe) return null;
  const spec = await describe(actor(orgId, app, "describe", "git-scan"), appRef(app));
  return spec && { kind: app.kind, spec };
}

/**
 * What the scan compares: a site's live deployment id, a digest of a pod's or group's spec (image, size, port,
 * replicas), so a deploy, an update or a scale makes a new revision; null when there is nothing to sync yet.
 */
export function revisionOf(state: AppState): string | null {
  if (state.kind === "site") return state.deploymentId;
  const digest = createHash("sha256").update(JSON.stringify(state.spec)).digest("hex").slice(0, 16);
  return `spec:${digest}`;
}

/**
 * Applies what a manifest asks that differs from the app now, each change as its own audited request of `actAs(action)`;
 * the changes in words ([] when nothing differed).
 */
export async function apply(
  kernel: AppsKernel,
  actAs: (action: string) => Principal,
  app: OrgApp,
  now: AppState,
  want: Desired,
): Promise<string[]> {
  const changes: string[] = [];
  if (now.kind === "site" && want.kind === "site") {
    if (now.deploymentId === want.deploymentId) return changes;
    const rollback = kernel.use("staticFiles")?.rollback;
    if (!rollback)
      throw new ApiError("invalid_request", "This platform's static area cannot change a site's deployment.");
    await rollback(actAs("gitopsRollbackSite"), app.id, want.deploymentId);
    return [`deployment ${now.deploymentId ?? "none"} → ${want.deploymentId}`];
  }
  if (now.kind === "site" || want.kind === "site") throw new Error("manifest kind does not match the app");
  const apps = kernel.use("appImages");
  if (!apps?.scale) throw new ApiError("invalid_request", "This platform's apps area cannot apply manifests.");
  const s = now.spec;
  if (app.kind === "pod" && (want.replicaMin !== 1 || want.replicaMax !== 1))
    throw new ApiError("invalid_request", "A pod runs one replica; make it a pod group to run more.");
  if (app.kind === "pod-group" && (want.replicaMin !== s.replicaMin || want.replicaMax !== s.replicaMax)) {
    await apps.scale(actAs("gitopsScaleApp"), appRef(app), { min: want.replicaMin, max: want.replicaMax });
    changes.push(`replicas ${s.replicaMin}-${s.replicaMax} → ${want.replicaMin}-${want.replicaMax}`);
  }
  if (want.image !== s.image) {
    await apps.deploy(actAs("gitopsDeployImage"), appRef(app), want.image);
    changes.push(`image ${s.image} → ${want.image}`);
  }
  return changes;
}
