import type { EdgeRouteSource } from "../kernel/area.js";
import type { StaticFiles } from "./contract.js";
import * as repo from "./repo.js";
import { STATIC_CHANNEL } from "./service.js";

/**
 * What the edge serves of static sites: <slug>.<APPS_DOMAIN> is a live (not deleted) site, served from the files
 * of its live deployment (null before the first finalize: the edge answers 503). Public; changes are announced on
 * NOTIFY static_routes (migration 018's trigger).
 */
export function siteEdgeRoutes(): EdgeRouteSource {
  return {
    channel: STATIC_CHANNEL,
    resolve: async (q, slug) => {
      const site = await repo.liveSiteBySlug(q, slug);
      return (
        site && {
          kind: "site",
          id: site.id,
          owner: { kind: site.owner_kind, id: site.owner_id },
          accountId: site.account_id,
          upstreams: [],
          visibility: "public",
          site: { deploymentId: site.live_deployment_id, spa: site.spa, notFoundPage: site.not_found_page },
        }
      );
    },
  };
}

/** The files of deployments, from the control store: any edge process on any host reads the same. */
export function siteFiles(): StaticFiles {
  return { manifest: repo.manifest, content: repo.blob };
}
