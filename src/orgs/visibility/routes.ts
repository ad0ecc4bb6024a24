import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { orgOf, read, tags, Visibility, write } from "../public.js";
import { approvalRoutes } from "./approval-routes.js";
import { Access, accessView, approvalView, Grant, GrantParams, grantView, Pending, SlugParams } from "./schemas.js";
import { visibilityService, type VisibilityDeps } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";
import { noContentAfter } from "../../http/no-content.js";

/** Site visibility of company sites (README "Site visibility"): access, grants, approvals, deploy-control. */
export function visibilityRoutes(app: FastifyInstance, deps: VisibilityDeps): void {
  const svc = visibilityService(deps);
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/sites/:slug/access",
      operationId: "getOrgSiteAccess",
      tags,
      summary: "A company site's visibility (what the edge enforces), its invite list and pending approvals.",
      summaryKo: "회사 사이트의 공개 범위, 초대 목록, 대기 중인 승인 요청.",
      auth: read,
      orgRole: "member",
      params: SlugParams,
      response: { 200: Access },
      handler: async (request) => accessView(await svc.get(orgOf(request), request.params.slug)),
    }),
  );

  routes.push(
    route({
      method: "PUT",
      url: "/v1/org/sites/:slug/access",
      operationId: "setOrgSiteAccess",
      tags,
      summary:
        "Set the visibility (the responsible member or an admin; above max_visibility: 403 deploy_rule_violation). With shared_approval a non-admin's widening answers 202 pending until approved.",
      summaryKo: "공개 범위를 바꿉니다. 공유 승인이 켜져 있으면 넓히는 요청은 202 대기.",
      auth: write,
      orgRole: "member",
      admits: true,
      errors: ["forbidden_role"],
      params: SlugParams,
      body: Body({ visibility: Visibility }),
      response: { 200: Access, 202: Pending },
      handler: async (request, reply) => {
        const result = await svc.put(callerOf(request), orgOf(request), request.params.slug, request.body.visibility);
        if ("applied" in result) return accessView(result.applied);
        return reply
          .code(202)
          .send({ status: "pending" as const, approval_id: result.pending.id, approval: approvalView(result.pending) });
      },
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/sites/:slug/access/grants",
      operationId: "grantOrgSiteAccess",
      tags,
      summary: "Invite an organization member by e-mail (seen by them while the visibility is invited or wider).",
      summaryKo: "조직 구성원을 이메일로 사이트에 초대합니다(공개 범위 invited).",
      auth: write,
      orgRole: "member",
      errors: ["forbidden_role"],
      params: SlugParams,
      body: Body({ email: Type.String({ minLength: 3, maxLength: 254 }) }),
      response: { 201: Grant },
      handler: async (request, reply) =>
        reply
          .code(201)
          .send(grantView(await svc.grant(callerOf(request), orgOf(request), request.params.slug, request.body.email))),
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/sites/:slug/access/grants/:uid",
      operationId: "revokeOrgSiteAccess",
      tags,
      summary: "Revoke a member's invitation to the site (uid: their account id).",
      summaryKo: "사이트 초대를 취소합니다.",
      auth: write,
      orgRole: "member",
      errors: ["forbidden_role"],
      params: GrantParams,
      response: { 204: Type.Null() },
      handler: async (request, reply) =>
        noContentAfter(reply, svc.revoke(callerOf(request), orgOf(request), request.params.slug, request.params.uid)),
    }),
  );

  approvalRoutes(app, svc);
  registerRoutes(app, routes);
}
