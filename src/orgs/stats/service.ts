/**
 * Site statistics of company deployments (GET /v1/org/stats/sites[/{slug}]): the organization's static sites, pods
 * and pod groups, found through the areas' owned-resource sources (kernel.all("owned")), with the edge's daily statistics
 * (src/edge/stats, `ownerAppsStats`) for each and summed over all of them.
 */
import type { Db } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { OrgMembership, OwnedResource } from "../public.js";
import { ApiError } from "../../http/errors.js";
import { ownerAppsStats, type StatsKind, type Window } from "../../edge/public.js";

/** Owned-resource kinds the edge serves, and the kind its statistics name them by (EdgeTarget.kind). */
const SERVED: Record<string, StatsKind> = { site: "site", pod: "pod", "pod-group": "group" };

export function orgStatsService(deps: { db: Db; kernel: Pick<Kernel, "all">; now?: () => number }) {
  const { db, kernel } = deps;
  const now = deps.now ?? Date.now;
  const orgOwner = (m: OrgMembership) => ({ kind: "org" as const, id: m.orgId });
  const sources = () => kernel.all("owned").filter((s) => s.kind in SERVED);

  async function report(m: OrgMembership, sites: OwnedResource[], days: Window) {
    const at = now();
    const stats = await ownerAppsStats(
      db,
      orgOwner(m),
      sites.map((s) => ({ kind: SERVED[s.kind], id: s.id })),
      days,
      at,
    );
    return { sites: sites.map((site, i) => ({ site, stats: stats.apps[i] })), total: stats.total };
  }

  return {
    /** Every company deployment (any member's) with a slug, oldest first. */
    async all(m: OrgMembership, days: Window) {
      const sites: OwnedResource[] = [];
      for (const source of sources()) sites.push(...(await source.list(db, orgOwner(m))).filter((s) => s.slug));
      sites.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
      return report(m, sites, days);
    },

    /** One company deployment by slug (or id); anything else, another organization's or a personal one, is 404. */
    async one(m: OrgMembership, ref: string, days: Window) {
      for (const source of sources()) {
        const site = await source.find(db, ref);
        if (site && site.owner.kind === "org" && site.owner.id === m.orgId) {
          const r = await report(m, [site], days);
          return { site, stats: r.sites[0].stats };
        }
      }
      throw new ApiError("not_found", `No company deployment ${ref} in the organization.`);
    },
  };
}

export type OrgStatsService = ReturnType<typeof orgStatsService>;
