import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, Visibility, write } from "../public.js";
import { Applied, Approval, approvalView, DeployControl, deployControlView } from "./schemas.js";
import type { VisibilityService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

/** Sharing requests (approve applies the visibility) and the admins' deploy-control. */
export function approvalRoutes(app: FastifyInstance, svc: VisibilityService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/approvals",
      operationId: "listOrgApprovals",
      tags,
      summary: "Pending sharing requests the caller decides: all for admins, their departments' for approvers.",
      summaryKo: "내가 승인할 수 있는 공유(공개 범위 확대) 요청.",
      auth: read,
      orgRole: "member",
      response: { 200: Type.Object({ items: Type.Array(Approval) }) },
      handler: async (request) => ({
        items: (await svc.approvals(callerOf(request), orgOf(request))).map(approvalView),
      }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/approvals/:id/approve",
      operationId: "approveOrgApproval",
      tags,
      summary: "Approve: the requested visibility applies (409 when already decided or superseded).",
      summaryKo: "공유 요청을 승인하고 공개 범위를 적용합니다.",
      auth: write,
      orgRole: "member",
      admits: true,
      errors: ["forbidden_role", "conflict"],
      params: IdParams,
      response: { 200: Approval },
      handler: async (request) => approvalView(await svc.approve(callerOf(request), orgOf(request), request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/approvals/:id/reject",
      operationId: "rejectOrgApproval",
      tags,
      summary: "Reject, with an optional note (409 when already decided or superseded).",
      summaryKo: "공유 요청을 거절합니다(메모 선택).",
      auth: write,
      orgRole: "member",
      errors: ["forbidden_role", "conflict"],
      params: IdParams,
      body: Type.Optional(Body({ note: Type.Optional(Type.String({ maxLength: 1000 })) })),
      response: { 200: Approval },
      handler: async (request) =>
        approvalView(
          await svc.reject(callerOf(request), orgOf(request), request.params.id, request.body?.note ?? null),
        ),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/deploy-control",
      operationId: "getOrgDeployControl",
      tags,
      summary:
        "Admin. Policy (default and maximum visibility, deploy permission, approval), department deploy blocks, every company site's visibility.",
      summaryKo: "배포 통제: 정책, 부서 배포 차단, 모든 회사 사이트의 공개 범위(관리자).",
      auth: read,
      orgRole: "admin",
      response: { 200: DeployControl },
      handler: async (request) => deployControlView(await svc.deployControl(orgOf(request))),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/deploy-control/apply",
      operationId: "applyOrgDeployControl",
      tags,
      summary:
        "Admin. Apply one visibility to every current company site; only_wider: only sites narrower than it change. Never above max_visibility.",
      summaryKo: "모든 회사 사이트에 공개 범위를 적용합니다(only_wider: 넓히기만).",
      auth: write,
      orgRole: "admin",
      admits: true,
      body: Body({ visibility: Visibility, only_wider: Type.Optional(Type.Boolean()) }),
      response: { 200: Applied },
      handler: async (request) =>
        svc.applyToAll(callerOf(request), orgOf(request), request.body.visibility, request.body.only_wider ?? false),
    }),
  );
  registerRoutes(app, routes);
}
