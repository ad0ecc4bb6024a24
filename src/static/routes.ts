import type { FastifyInstance } from "fastify";
import type { Route } from "../http/route.js";
import { resourceRoutes } from "../http/resource-routes.js";
import { siteView } from "./view.js";
import { SiteBody, SiteParams, SitePatchBody, Site, tags } from "./schemas.js";
import type { StaticRouteDeps } from "./route-deps.js";
import { deploymentRoutes } from "./deployment-routes.js";

/** Static sites: create, list, read, change, delete; deployments in deployment-routes.ts. */
export async function staticRoutes(app: FastifyInstance, deps: StaticRouteDeps): Promise<Route[]> {
  const { svc, config } = deps;
  const view = async (site: Parameters<typeof siteView>[0]) => siteView(site, config, await svc.visibilityOf(site));

  return [
    ...resourceRoutes({
      name: "StaticSite",
      url: "/v1/static",
      tags,
      params: SiteParams,
      scope: "static",
      instances: true,
      schema: Site,
      view,
      service: svc,
      create: {
        summary:
          "Create a static site (201), served at http://<slug>.<APPS_DOMAIN> once a deployment is finalized; the slug is shared with pods and pod groups.",
        summaryKo: "정적 사이트를 만듭니다(<slug>.<APPS_DOMAIN>에서 제공).",
        admits: true,
        errors: ["bad_slug", "slug_taken"],
        validationCodes: { "/name": "bad_slug", "/slug": "bad_slug" },
        body: SiteBody,
      },
      list: {
        summary: "The caller's static sites, deleted ones excluded; instance-limited keys see their sites.",
        summaryKo: "정적 사이트 목록(삭제된 것 제외).",
      },
      get: {
        summary: "One static site by slug or id, with its live deployment.",
        summaryKo: "정적 사이트 하나(slug 또는 id).",
      },
      update: {
        summary: "Change the name, the SPA fallback or the 404 page; the edge follows at once. The slug stays.",
        summaryKo: "이름, SPA 모드, 404 페이지를 바꿉니다(에지에 즉시 반영).",
        errors: ["bad_slug"],
        validationCodes: { "/name": "bad_slug" },
        body: SitePatchBody,
      },
      remove: {
        summary:
          "Delete the site: the edge stops serving it at once and its slug is free again; deployments and files are removed by the sweep.",
        summaryKo: "사이트를 삭제합니다(에지에서 즉시 내려가고 파일은 정리 작업이 지웁니다).",
        status: 204,
      },
    }),
    ...(await deploymentRoutes(app, deps)),
  ];
}
