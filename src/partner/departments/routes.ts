import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { partnerOf } from "../guard.js";
import { PARTNER_ERRORS, read, tags, write } from "../schemas.js";
import type { DepartmentsService } from "./service.js";
import type { DepartmentRow } from "./repo.js";
import { route, type Route } from "../../http/route.js";

const Code = Type.String({ minLength: 1, maxLength: 100 });

const Department = Type.Object({
  code: Type.String(),
  parentCode: Nullable(Type.String()),
  name: Nullable(Type.String()),
  max_running: Nullable(Type.Integer()),
  deploy_blocked: Type.Boolean(),
});

const view = (d: DepartmentRow) => ({
  code: d.code,
  parentCode: d.parent_code,
  name: d.name,
  max_running: d.max_running,
  deploy_blocked: d.deploy_blocked,
});

/** /v1/partner/departments: the customer's organization chart and per-department run policy (README.md). */
export function departmentRoutes(svc: DepartmentsService): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/partner/departments",
      operationId: "listPartnerDepartments",
      tags,
      summary: "The department chart with each department's policy.",
      summaryKo: "부서 목록과 정책.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      response: { 200: Type.Object({ items: Type.Array(Department) }) },
      handler: async (request) => ({ items: (await svc.list(partnerOf(request))).map(view) }),
    }),
    route({
      method: "PUT",
      url: "/v1/partner/departments",
      operationId: "putPartnerDepartments",
      tags,
      summary:
        "Replaces the chart with code/parentCode entries; answers insert, update, skip or delete per code (idempotent). Codes not pushed are deleted and their children unassigned. A parentCode not in the chart or a cycle is 400.",
      summaryKo: "조직도 전체 교체(항목별 결과, 멱등).",
      auth: write,
      errors: [...PARTNER_ERRORS],
      body: Body({
        departments: Type.Array(
          Body({
            code: Code,
            parentCode: Type.Optional(Nullable(Code)),
            name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
          }),
          { maxItems: 5000 },
        ),
      }),
      response: {
        200: Type.Object({
          items: Type.Array(
            Type.Object({
              code: Type.String(),
              result: Type.Union([
                Type.Literal("insert"),
                Type.Literal("update"),
                Type.Literal("skip"),
                Type.Literal("delete"),
              ]),
            }),
          ),
        }),
      },
      handler: async (request) =>
        svc.replace(
          callerOf(request),
          partnerOf(request),
          request.body.departments.map((d) => ({
            code: d.code,
            parent_code: d.parentCode ?? null,
            name: d.name ?? null,
          })),
        ),
    }),
    route({
      method: "PUT",
      url: "/v1/partner/departments/:code/policy",
      operationId: "putPartnerDepartmentPolicy",
      tags,
      summary:
        "Sets the department's concurrent-run limit (max_running running app instances, sub-departments counted in; null: none) and deploy block. Enforced when an app starts: 429 quota_exceeded, 403 department_deploy_blocked; running apps continue.",
      summaryKo: "부서 동시 실행 한도와 배포 차단.",
      auth: write,
      errors: [...PARTNER_ERRORS],
      params: Type.Object({ code: Code }),
      body: Body({
        max_running: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 100_000 }))),
        deploy_blocked: Type.Optional(Type.Boolean()),
      }),
      response: { 200: Department },
      handler: async (request) =>
        view(
          await svc.setPolicy(callerOf(request), partnerOf(request), request.params.code, {
            max_running: request.body.max_running ?? null,
            deploy_blocked: request.body.deploy_blocked ?? false,
          }),
        ),
    }),
  ];
}
