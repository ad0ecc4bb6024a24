import type { VisibilityInForce } from "../edge/contract.js";
import type { DeploymentRow, SiteRow } from "./repo.js";

/** Where a site is served: http://<slug>.<APPS_DOMAIN>[:EDGE_PORT], like a pod's url. */
export interface SiteUrls {
  appsDomain: string;
  edgePort: number;
}

export function siteView(site: SiteRow, urls: SiteUrls, access: VisibilityInForce) {
  const port = urls.edgePort === 80 ? "" : `:${urls.edgePort}`;
  return {
    id: site.id,
    name: site.name,
    slug: site.slug,
    url: `http://${site.slug}.${urls.appsDomain}${port}`,
    spa: site.spa,
    not_found_page: site.not_found_page,
    visibility: access.visibility,
    visibility_source: access.source,
    site_visibility: access.own,
    live_deployment_id: site.live_deployment_id,
    created_at: site.created_at.toISOString(),
    updated_at: site.updated_at.toISOString(),
  };
}

/** A deployment's status: finalized ones are live (the site's) or superseded (kept for rollback). */
export function deploymentStatus(site: SiteRow, d: DeploymentRow) {
  if (d.status !== "finalized") return d.status;
  return site.live_deployment_id === d.id ? ("live" as const) : ("superseded" as const);
}

export function deploymentView(
  site: SiteRow,
  d: DeploymentRow,
  limits: { apiBase: string; maxBytes: number; maxFiles: number },
) {
  return {
    id: d.id,
    site_id: site.id,
    site_slug: site.slug,
    status: deploymentStatus(site, d),
    upload_url:
      d.status === "awaiting_upload" ? `${limits.apiBase}/v1/static/${site.slug}/deployments/${d.id}/files` : null,
    max_bytes: limits.maxBytes,
    max_files: limits.maxFiles,
    file_count: d.file_count,
    bytes: d.bytes,
    created_at: d.created_at.toISOString(),
    uploaded_at: d.uploaded_at?.toISOString() ?? null,
    finalized_at: d.finalized_at?.toISOString() ?? null,
  };
}
