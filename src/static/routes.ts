import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../auth/principal.js";
import { route, type Route } from "../http/route.js";
import { siteView } from "./view.js";
import { read, SiteBody, SiteParams, SitePatchBody, Site, tags, write } from "./schemas.js";
import type { StaticRouteDeps } from "./route-deps.js";
import { deploymentRoutes } from "./deployment-routes.js";

/** Static sites: create, list, read, change, delete; deployments in deployment-routes.ts. */
export async function staticRoutes(app: FastifyInstance, deps: StaticRouteDeps): Promise<Route[]> {
  const { svc, config } = deps;
  const view = async (site: Parameters<typeof siteView>[0]) => siteView(site, config, await svc.visibilityOf(site));

  return [
    route({
      method: "POST",
      url: "/v1/static",
      operationId: "createStaticSite",
      tags,
      summary:
        "Create a static site (201), served at http://<slug>.<APPS_DOMAIN> once a deployment is finalized; the slug is shared with pods and pod groups.",
      summaryKo: "정적 사이트를 만듭니다(<slug>.<APPS_DOMAIN>에서 제공).",
      auth: { scope: "static:write", instance: "create" },
      admits: true,
      errors: ["bad_slug", "slug_taken"],
      validationCodes: { "/name": "bad_slug", "/slug": "bad_slug" },
      body: SiteBody,
      response: { 201: Site },
      handler: async (request, reply) =>
        reply.code(201).send(await view(await svc.create(callerOf(request), request.body))),
    }),
    route({
      method: "GET",
      url: "/v1/static",
      operationId: "listStaticSites",
      tags,
      summary: "The caller's static sites, deleted ones excluded; instance-limited keys see their sites.",
      summaryKo: "정적 사이트 목록(삭제된 것 제외).",
      auth: { scope: "static:read", instance: "list" },
      response: { 200: Type.Array(Site) },
      handler: async (request) => {
        const views = [];
        for (const site of await svc.list(callerOf(request), request.instanceFilter)) views.push(await view(site));
        return views;
      },
    }),
    route({
      method: "GET",
      url: "/v1/static/:slug",
      operationId: "getStaticSite",
      tags,
      summary: "One static site by slug or id, with its live deployment.",
      summaryKo: "정적 사이트 하나(slug 또는 id).",
      auth: read,
      params: SiteParams,
      response: { 200: Site },
      handler: async (request) => view(await svc.get(callerOf(request), request.params.slug)),
    }),
    route({
      method: "PATCH",
      url: "/v1/static/:slug",
      operationId: "updateStaticSite",
      tags,
      summary: "Change the name, the SPA fallback or the 404 page; the edge follows at once. The slug stays.",
      summaryKo: "이름, SPA 모드, 404 페이지를 바꿉니다(에지에 즉시 반영).",
      auth: write,
      errors: ["bad_slug"],
      validationCodes: { "/name": "bad_slug" },
      params: SiteParams,
      body: SitePatchBody,
      response: { 200: Site },
      handler: async (request) => view(await svc.update(callerOf(request), request.params.slug, request.body)),
    }),
    route({
      method: "DELETE",
      url: "/v1/static/:slug",
      operationId: "deleteStaticSite",
      tags,
      summary:
        "Delete the site: the edge stops serving it at once and its slug is free again; deployments and files are removed by the sweep.",
      summaryKo: "사이트를 삭제합니다(에지에서 즉시 내려가고 파일은 정리 작업이 지웁니다).",
      auth: write,
      params: SiteParams,
      response: { 204: Type.Null({ description: "No content" }) },
      handler: async (request, reply) => {
        await svc.remove(callerOf(request), request.params.slug);
        return reply.code(204).send(null);
      },
    }),
    ...(await deploymentRoutes(app, deps)),
  ];
}
