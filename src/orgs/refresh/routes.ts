import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Nullable } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
import type { RefreshRow } from "./repo.js";
import { refreshService, type RefreshDeps, type RefreshService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const Status = Type.Union(
  ["proposed", "dismissed", "rebuilding", "done", "failed"].map((s) => Type.Literal(s)),
  { description: "proposed → rebuilding → done | failed; dismissed: never proposed again" },
);

const Item = Type.Object({
  id: Type.String(),
  app_kind: Type.Union([Type.Literal("pod"), Type.Literal("group")]),
  app_id: Type.String(),
  app_slug: Type.String(),
  build_id: Type.String({ description: "the build whose base image changed" }),
  base_image: Type.String(),
  old_digest: Nullable(Type.String({ description: "the digest the build pulled" })),
  new_digest: Type.String({ description: "the digest the registry names now" }),
  status: Status,
  rebuild_build_id: Nullable(Type.String()),
  error: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const itemView = (r: RefreshRow) => ({
  ...r,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const Builder = Type.Object({
  name: Type.String({ description: "buildah" }),
  version: Nullable(Type.String()),
  available: Type.Boolean(),
  problem: Nullable(Type.String()),
});

const Started = Type.Object({
  build_id: Type.String(),
  tag: Type.String({ description: "the tag the rebuilt image gets in the app's repository: build-<build_id>" }),
});

/** /v1/org/image-refreshes (admin): base-image refresh proposals (README, "Base-image refresh"). */
export function refreshRoutes(app: FastifyInstance, deps: RefreshDeps): void {
  const svc: RefreshService = refreshService(deps);
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/image-refreshes",
      operationId: "listOrgImageRefreshes",
      tags,
      summary:
        "Base-image refresh proposals of company apps built by the platform (admin), with the policy (off, notify or auto), keep_days and the builder.",
      summaryKo: "베이스 이미지 갱신 제안 목록(관리자): 정책(off, notify, auto), 보관 일수, 빌더.",
      auth: read,
      orgRole: "admin",
      response: {
        200: Type.Object({
          policy: Type.Union([Type.Literal("off"), Type.Literal("notify"), Type.Literal("auto")]),
          keep_days: Type.Integer(),
          builder: Builder,
          items: Type.Array(Item),
        }),
      },
      handler: async (request) => {
        const res = await svc.list(orgOf(request).orgId);
        return { ...res, items: res.items.map(itemView) };
      },
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/image-refreshes/check",
      operationId: "checkOrgImageRefreshes",
      tags,
      summary: "Check base-image updates now (admin): {created, checked}; with policy auto the rebuilds start.",
      summaryKo: "베이스 이미지 갱신을 지금 확인합니다(관리자). auto 정책이면 다시 빌드를 시작합니다.",
      auth: write,
      orgRole: "admin",
      response: { 200: Type.Object({ created: Type.Integer(), checked: Type.Integer() }) },
      handler: async (request) => svc.check(callerOf(request), orgOf(request).orgId),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/image-refreshes/:id/dismiss",
      operationId: "dismissOrgImageRefresh",
      tags,
      summary: "Dismiss a proposal (admin): the same app and new version is not proposed again.",
      summaryKo: "제안을 무시합니다(관리자). 같은 앱과 같은 새 버전은 다시 제안하지 않습니다.",
      auth: write,
      orgRole: "admin",
      errors: ["conflict"],
      params: IdParams,
      response: { 200: Item },
      handler: async (request) =>
        itemView(await svc.dismiss(callerOf(request), orgOf(request).orgId, request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/image-refreshes/:id/rebuild",
      operationId: "rebuildOrgImageRefresh",
      tags,
      summary:
        "Rebuild the same source on the proposed base version (admin); the app rolls to the new image on success. 202 {build_id, tag}.",
      summaryKo: "같은 소스를 제안된 버전으로 다시 빌드하고 성공하면 앱 이미지를 교체합니다(관리자). 202.",
      auth: write,
      orgRole: "admin",
      admits: true,
      errors: ["conflict", "builder_unavailable", "host_unavailable", "scope_insufficient"],
      params: IdParams,
      response: { 202: Started },
      handler: async (request, reply) =>
        reply.code(202).send(await svc.rebuild(callerOf(request), orgOf(request).orgId, request.params.id)),
    }),
  );
  registerRoutes(app, routes);
}
