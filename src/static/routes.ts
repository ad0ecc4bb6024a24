import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../auth/principal.js";
import { Body, Nullable } from "../http/schemas.js";
import { siteView } from "./view.js";
import { NotFoundPage, read, SiteParams, Site, SLUG, tags, write, type StaticRouteDeps } from "./schemas.js";
import { deploymentRoutes } from "./deployment-routes.js";

/** Static sites: create, list, read, change, delete; deployments in deployment-routes.ts. */
export async function staticRoutes(app: FastifyInstance, deps: StaticRouteDeps): Promise<void> {
  const { svc, config } = deps;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const view = async (site: Parameters<typeof siteView>[0]) => siteView(site, config, await svc.visibilityOf(site));

  r.post(
    "/v1/static",
    {
      config: {
        auth: { scope: "static:write", instance: "create" },
        validationCodes: { "/name": "bad_slug", "/slug": "bad_slug" },
        errors: ["bad_slug", "slug_taken", "insufficient_funds", "deploy_rule_violation"],
        summaryKo: "정적 사이트를 만듭니다(<slug>.<APPS_DOMAIN>에서 제공).",
      },
      schema: {
        operationId: "createStaticSite",
        tags,
        summary:
          "Create a static site (201), served at http://<slug>.<APPS_DOMAIN> once a deployment is finalized; the slug is shared with pods and pod groups.",
        body: Body({
          name: Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 }),
          slug: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
          spa: Type.Optional(Type.Boolean({ description: "unknown paths without an extension answer index.html" })),
          not_found_page: Type.Optional(Nullable(NotFoundPage)),
        }),
        response: { 201: Site },
      },
    },
    async (request, reply) => reply.code(201).send(await view(await svc.create(callerOf(request), request.body))),
  );

  r.get(
    "/v1/static",
    {
      config: {
        auth: { scope: "static:read", instance: "list" },
        errors: [],
        summaryKo: "정적 사이트 목록(삭제된 것 제외).",
      },
      schema: {
        operationId: "listStaticSites",
        tags,
        summary: "The caller's static sites, deleted ones excluded; instance-limited keys see their sites.",
        response: { 200: Type.Array(Site) },
      },
    },
    async (request) => {
      const views = [];
      for (const site of await svc.list(callerOf(request), request.instanceFilter)) views.push(await view(site));
      return views;
    },
  );

  r.get(
    "/v1/static/:slug",
    {
      config: { auth: read, errors: ["not_found"], summaryKo: "정적 사이트 하나(slug 또는 id)." },
      schema: {
        operationId: "getStaticSite",
        tags,
        summary: "One static site by slug or id, with its live deployment.",
        params: SiteParams,
        response: { 200: Site },
      },
    },
    async (request) => view(await svc.get(callerOf(request), request.params.slug)),
  );

  r.patch(
    "/v1/static/:slug",
    {
      config: {
        auth: write,
        validationCodes: { "/name": "bad_slug" },
        errors: ["not_found", "bad_slug"],
        summaryKo: "이름, SPA 모드, 404 페이지를 바꿉니다(에지에 즉시 반영).",
      },
      schema: {
        operationId: "updateStaticSite",
        tags,
        summary: "Change the name, the SPA fallback or the 404 page; the edge follows at once. The slug stays.",
        params: SiteParams,
        body: Body({
          name: Type.Optional(Type.String({ pattern: SLUG, minLength: 3, maxLength: 40 })),
          spa: Type.Optional(Type.Boolean()),
          not_found_page: Type.Optional(Nullable(NotFoundPage)),
        }),
        response: { 200: Site },
      },
    },
    async (request) => view(await svc.update(callerOf(request), request.params.slug, request.body)),
  );

  r.delete(
    "/v1/static/:slug",
    {
      config: {
        auth: write,
        errors: ["not_found"],
        summaryKo: "사이트를 삭제합니다(에지에서 즉시 내려가고 파일은 정리 작업이 지웁니다).",
      },
      schema: {
        operationId: "deleteStaticSite",
        tags,
        summary:
          "Delete the site: the edge stops serving it at once and its slug is free again; deployments and files are removed by the sweep.",
        params: SiteParams,
        response: { 204: Type.Null({ description: "No content" }) },
      },
    },
    async (request, reply) => {
      await svc.remove(callerOf(request), request.params.slug);
      return reply.code(204).send(null);
    },
  );

  await deploymentRoutes(app, deps);
}
