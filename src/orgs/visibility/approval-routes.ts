import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, Visibility, write } from "../public.js";
import { Applied, Approval, approvalView, DeployControl, deployControlView } from "./schemas.js";
import type { VisibilityService } from "./service.js";

/** Sharing requests (approve applies the visibility) and the admins' deploy-control. */
export function approvalRoutes(app: FastifyInstance, svc: VisibilityService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/org/approvals",
    {
      config: {
        auth: read,
        orgRole: "member",
        errors: ["not_found"],
        summaryKo: "내가 승인할 수 있는 공유(공개 범위 확대) 요청.",
      },
      schema: {
        operationId: "listOrgApprovals",
        tags,
        summary: "Pending sharing requests the caller decides: all for admins, their departments' for approvers.",
        response: { 200: Type.Object({ items: Type.Array(Approval) }) },
      },
    },
    async (request) => ({ items: (await svc.approvals(callerOf(request), orgOf(request))).map(approvalView) }),
  );

  r.post(
    "/v1/org/approvals/:id/approve",
    {
      config: {
        auth: write,
        orgRole: "member",
        errors: ["not_found", "forbidden_role", "conflict", "deploy_rule_violation"],
        summaryKo: "공유 요청을 승인하고 공개 범위를 적용합니다.",
      },
      schema: {
        operationId: "approveOrgApproval",
        tags,
        summary: "Approve: the requested visibility applies (409 when already decided or superseded).",
        params: IdParams,
        response: { 200: Approval },
      },
    },
    async (request) => approvalView(await svc.approve(callerOf(request), orgOf(request), request.params.id)),
  );

  r.post(
    "/v1/org/approvals/:id/reject",
    {
      config: {
        auth: write,
        orgRole: "member",
        errors: ["not_found", "forbidden_role", "conflict"],
        summaryKo: "공유 요청을 거절합니다(메모 선택).",
      },
      schema: {
        operationId: "rejectOrgApproval",
        tags,
        summary: "Reject, with an optional note (409 when already decided or superseded).",
        params: IdParams,
        body: Type.Optional(Body({ note: Type.Optional(Type.String({ maxLength: 1000 })) })),
        response: { 200: Approval },
      },
    },
    async (request) =>
      approvalView(await svc.reject(callerOf(request), orgOf(request), request.params.id, request.body?.note ?? null)),
  );

  r.get(
    "/v1/org/deploy-control",
    {
      config: {
        auth: read,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role"],
        summaryKo: "배포 통제: 정책, 부서 배포 차단, 모든 회사 사이트의 공개 범위(관리자).",
      },
      schema: {
        operationId: "getOrgDeployControl",
        tags,
        summary:
          "Admin. Policy (default and maximum visibility, deploy permission, approval), department deploy blocks, every company site's visibility.",
        response: { 200: DeployControl },
      },
    },
    async (request) => deployControlView(await svc.deployControl(orgOf(request))),
  );

  r.post(
    "/v1/org/deploy-control/apply",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role", "deploy_rule_violation"],
        summaryKo: "모든 회사 사이트에 공개 범위를 적용합니다(only_wider: 넓히기만).",
      },
      schema: {
        operationId: "applyOrgDeployControl",
        tags,
        summary:
          "Admin. Apply one visibility to every current company site; only_wider: only sites narrower than it change. Never above max_visibility.",
        body: Body({ visibility: Visibility, only_wider: Type.Optional(Type.Boolean()) }),
        response: { 200: Applied },
      },
    },
    async (request) =>
      svc.applyToAll(callerOf(request), orgOf(request), request.body.visibility, request.body.only_wider ?? false),
  );
}
