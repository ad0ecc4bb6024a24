import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { orgOf, read, tags, Visibility, write } from "../public.js";
import { approvalRoutes } from "./approval-routes.js";
import { Access, accessView, approvalView, Grant, GrantParams, grantView, Pending, SlugParams } from "./schemas.js";
import { visibilityService, type VisibilityDeps } from "./service.js";

/** Site visibility of company sites (README "Site visibility"): access, grants, approvals, deploy-control. */
export function visibilityRoutes(app: FastifyInstance, deps: VisibilityDeps): void {
  const svc = visibilityService(deps);
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/org/sites/:slug/access",
    {
      config: {
        auth: read,
        orgRole: "member",
        errors: ["not_found"],
        summaryKo: "회사 사이트의 공개 범위, 초대 목록, 대기 중인 승인 요청.",
      },
      schema: {
        operationId: "getOrgSiteAccess",
        tags,
        summary: "A company site's visibility (what the edge enforces), its invite list and pending approvals.",
        params: SlugParams,
        response: { 200: Access },
      },
    },
    async (request) => accessView(await svc.get(orgOf(request), request.params.slug)),
  );

  r.put(
    "/v1/org/sites/:slug/access",
    {
      config: {
        auth: write,
        orgRole: "member",
        errors: ["not_found", "forbidden_role", "deploy_rule_violation"],
        summaryKo: "공개 범위를 바꿉니다. 공유 승인이 켜져 있으면 넓히는 요청은 202 대기.",
      },
      schema: {
        operationId: "setOrgSiteAccess",
        tags,
        summary:
          "Set the visibility (the responsible member or an admin; above max_visibility: 403 deploy_rule_violation). With shared_approval a non-admin's widening answers 202 pending until approved.",
        params: SlugParams,
        body: Body({ visibility: Visibility }),
        response: { 200: Access, 202: Pending },
      },
    },
    async (request, reply) => {
      const result = await svc.put(callerOf(request), orgOf(request), request.params.slug, request.body.visibility);
      if ("applied" in result) return accessView(result.applied);
      return reply
        .code(202)
        .send({ status: "pending" as const, approval_id: result.pending.id, approval: approvalView(result.pending) });
    },
  );

  r.post(
    "/v1/org/sites/:slug/access/grants",
    {
      config: {
        auth: write,
        orgRole: "member",
        errors: ["not_found", "forbidden_role"],
        summaryKo: "조직 구성원을 이메일로 사이트에 초대합니다(공개 범위 invited).",
      },
      schema: {
        operationId: "grantOrgSiteAccess",
        tags,
        summary: "Invite an organization member by e-mail (seen by them while the visibility is invited or wider).",
        params: SlugParams,
        body: Body({ email: Type.String({ minLength: 3, maxLength: 254 }) }),
        response: { 201: Grant },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(grantView(await svc.grant(callerOf(request), orgOf(request), request.params.slug, request.body.email))),
  );

  r.delete(
    "/v1/org/sites/:slug/access/grants/:uid",
    {
      config: {
        auth: write,
        orgRole: "member",
        errors: ["not_found", "forbidden_role"],
        summaryKo: "사이트 초대를 취소합니다.",
      },
      schema: {
        operationId: "revokeOrgSiteAccess",
        tags,
        summary: "Revoke a member's invitation to the site (uid: their account id).",
        params: GrantParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await svc.revoke(callerOf(request), orgOf(request), request.params.slug, request.params.uid);
      return reply.code(204).send(null);
    },
  );

  approvalRoutes(app, svc);
}
