/**
 * Company sites: apps an organization owns that the edge serves (static sites, pods, pod groups), found by slug
 * through the edge's route sources (kernel.all("edgeRoutes")) and listed through the areas' owned-resource sources
 * (kernel.all("owned")). Their effective visibility, as the edge enforces it, is `effectiveVisibility`.
 */
import type { Queryable } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { EdgeAccessPolicy } from "../../edge/contract.js";
import type { EdgeTarget } from "../../kernel/area.js";
import { ApiError } from "../../http/errors.js";
import { visibilityRank, type OrgRow, type VisibilityLevel as Visibility } from "../public.js";
import * as repo from "./repo.js";

export interface CompanySite {
  /** the edge target's kind: site, pod, group */
  kind: string;
  id: string;
  slug: string;
  name: string | null;
  /** the responsible member (creator), when its area says */
  creator: string | null;
}

/** edge target kinds and the owned-resource kinds (orgs/contract.ts OwnedResource.kind) naming the same apps */
const OWNED_KIND: Record<string, string> = { site: "site", pod: "pod", group: "pod-group" };
const EDGE_KIND: Record<string, string> = { site: "site", pod: "pod", "pod-group": "group" };

export type VisibilitySource = "site" | "organization_default" | "organization_maximum";

/**
 * The site's own visibility, else the organization's default, never above the organization's maximum; with which
 * of the three decided (`source`) and the site's own setting (`own`, null: none), as views show them.
 */
export function visibilityInForce(
  stored: Visibility | null,
  org: Pick<OrgRow, "default_visibility" | "max_visibility">,
): { visibility: Visibility; source: VisibilitySource; own: Visibility | null } {
  const v = stored ?? org.default_visibility;
  if (visibilityRank(v) > visibilityRank(org.max_visibility))
    return { visibility: org.max_visibility, source: "organization_maximum", own: stored };
  return { visibility: v, source: stored === null ? "organization_default" : "site", own: stored };
}

export const effectiveVisibility = (
  stored: Visibility | null,
  org: Pick<OrgRow, "default_visibility" | "max_visibility">,
): Visibility => visibilityInForce(stored, org).visibility;

async function creatorOf(q: Queryable, kernel: Kernel, target: EdgeTarget): Promise<string | null> {
  if (target.accountId) return target.accountId;
  const source = kernel.all("owned").find((s) => s.kind === OWNED_KIND[target.kind]);
  return (await source?.find(q, target.id))?.accountId ?? null;
}

/** The organization's site served at <slug>; 404 for an unknown slug and for anyone else's app. */
export async function findCompanySite(q: Queryable, kernel: Kernel, orgId: string, slug: string) {
  let target: EdgeTarget | null = null;
  for (const source of kernel.all("edgeRoutes")) {
    target = await source.resolve(q, slug);
    if (target) break;
  }
  if (!target || target.owner.kind !== "org" || target.owner.id !== orgId)
    throw new ApiError("not_found", `No company site ${slug} in this organization.`);
  const site: CompanySite = {
    kind: target.kind,
    id: target.id,
    slug,
    name: null,
    creator: await creatorOf(q, kernel, target),
  };
  return site;
}

/** Every current company site (what the areas' owned-resource sources list with a slug). */
export async function listCompanySites(q: Queryable, kernel: Kernel, orgId: string): Promise<CompanySite[]> {
  const sites: CompanySite[] = [];
  for (const source of kernel.all("owned")) {
    const kind = EDGE_KIND[source.kind];
    if (!kind) continue;
    for (const r of await source.list(q, { kind: "org", id: orgId }))
      if (r.slug !== null) sites.push({ kind, id: r.id, slug: r.slug, name: r.name, creator: r.accountId });
  }
  return sites.sort((a, b) => a.slug.localeCompare(b.slug));
}

/**
 * Organization visibility for the edge (kernel.all("edgeAccess")): every target an organization owns. private < invited <
 * department < company < public; the organization's owner and admins and the site's responsible member always see
 * it; company: any member; department: members of the responsible member's department or its sub-departments;
 * invited: members granted the site; private: nobody else. Non-members see public sites only.
 */
export function siteAccessPolicy(): EdgeAccessPolicy {
  const explain = async (q: Queryable, target: Pick<EdgeTarget, "kind" | "id" | "owner">) => {
    const found = await repo.edgeVisibility(q, target.owner.id, target);
    // the organization is gone (its assets move back to their creators in the same transaction): fail closed
    return found
      ? visibilityInForce(found.stored, found)
      : { visibility: "private", source: "site" as const, own: null };
  };
  return {
    ownerKind: "org",
    channel: repo.SITE_ACCESS_CHANNEL,
    visibility: async (q, target) => (await explain(q, target)).visibility,
    explain,
    admits: async (q, target, visibility, accountId) => {
      const orgId = target.owner.id;
      const member = await repo.memberOf(q, orgId, accountId);
      if (!member) return false;
      if (member.role !== "member" || accountId === target.accountId) return true;
      switch (visibility as Visibility) {
        case "public":
        case "company":
          return true;
        case "invited":
          return repo.hasGrant(q, target, accountId);
        case "department": {
          if (!target.accountId || !member.department_id) return false;
          const responsible = await repo.memberOf(q, orgId, target.accountId);
          if (!responsible?.department_id) return false;
          return repo.inDepartment(q, member.department_id, responsible.department_id);
        }
        default:
          return false;
      }
    },
  };
}
