import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { ApiError } from "../../http/errors.js";
import { Body } from "../../http/schemas.js";
import { account, orgOf, read, tags, write } from "../public.js";
import { chartService, type ChartDeps, type ChartService } from "./service.js";
import { SYNC_BODY_LIMIT } from "./limits.js";
import {
  CodeParams,
  RefParams,
  csvBody,
  Department,
  DepartmentFields,
  departmentView,
  DepartmentsSyncAnswer,
  DepartmentsSyncBody,
  MembersSyncAnswer,
  MembersSyncBody,
} from "./schemas.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const ADMIN = ["not_found", "forbidden_role"] as const;

/** The CSV text of a text/csv body or of {"csv": "..."}. */
function csvText(request: FastifyRequest): string {
  const body: unknown = request.body;
  if (typeof body === "string") return body;
  if (body && typeof body === "object" && typeof (body as { csv?: unknown }).csv === "string")
    return (body as { csv: string }).csv;
  throw new ApiError("invalid_request", 'Send the CSV as a text/csv body, or as JSON {"csv": "..."}.');
}

/**
 * The organization chart (README.md, "Departments and HR syncs"): departments by CSV, JSON sync and REST, their
 * deploy block, and the member syncs (CSV and JSON) that set existing members' roles and departments.
 */
export function chartRoutes(app: FastifyInstance, deps: ChartDeps): void {
  const svc = chartService(deps);
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/departments",
      operationId: "listOrgDepartments",
      tags,
      summary:
        "Departments, parents before children (siblings by code), with member counts and the deploy block each inherits.",
      summaryKo: "부서 목록(상위 부서가 먼저).",
      auth: read,
      orgRole: "member",
      response: { 200: Type.Object({ items: Type.Array(Department) }) },
      handler: async (request) => ({ items: (await svc.list(orgOf(request))).map(departmentView) }),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/departments/sync",
      operationId: "syncOrgDepartments",
      tags,
      summary:
        "JSON sync by code (admin): applies only the differences, in one transaction, with a result per item (insert, update, skip, delete); idempotent. implicit_deletion deletes departments not in the list (their members become unassigned). An unknown parent_code or a cycle refuses the whole request (400).",
      summaryKo: "HR 시스템의 부서 전체를 코드 기준으로 동기화(차이만 반영, 항목별 결과).",
      auth: write,
      orgRole: "admin",
      errors: [...ADMIN],
      body: DepartmentsSyncBody,
      response: { 200: DepartmentsSyncAnswer },
      options: { bodyLimit: SYNC_BODY_LIMIT },
      handler: async (request) =>
        svc.sync(callerOf(request), orgOf(request), request.body.departments, request.body.implicit_deletion ?? false),
    }),
  );

  routes.push(
    route({
      method: "PUT",
      url: "/v1/org/departments/:code",
      operationId: "putOrgDepartment",
      tags,
      summary:
        "Upsert by code (admin): 201 when created, 200 otherwise. Omitted parent_code or approver_email: none. A parent that is the department itself or one of its descendants is 400.",
      summaryKo: "코드로 부서를 만들거나 고칩니다.",
      auth: write,
      orgRole: "admin",
      errors: [...ADMIN],
      params: CodeParams,
      body: Body(DepartmentFields),
      response: { 200: Department, 201: Department },
      handler: async (request, reply) => {
        const { created, department } = await svc.put(callerOf(request), orgOf(request), {
          code: request.params.code,
          ...request.body,
        });
        return reply.code(created ? 201 : 200).send(departmentView(department));
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/departments/:code",
      operationId: "deleteOrgDepartment",
      tags,
      summary:
        "Delete a department by id or code (admin): its members become unassigned, its sub-departments move under its parent.",
      summaryKo: "부서 삭제. 구성원은 부서 없음이 되고 하위 부서는 한 단계 올라갑니다.",
      auth: write,
      orgRole: "admin",
      errors: [...ADMIN],
      params: RefParams,
      response: {
        200: Type.Object({
          deleted: Type.Boolean(),
          code: Type.String(),
          members_unassigned: Type.Integer(),
          children_moved: Type.Integer(),
        }),
      },
      handler: async (request) => svc.remove(callerOf(request), orgOf(request), request.params.code),
    }),
  );

  routes.push(
    route({
      method: "PATCH",
      url: "/v1/org/departments/:code/deploy-policy",
      operationId: "setOrgDepartmentDeployPolicy",
      tags,
      summary:
        "Block or allow new deployments and code updates for a department (by id or code) and, by inheritance, its sub-departments (admin).",
      summaryKo: "부서의 배포 차단(하위 부서에 상속).",
      auth: write,
      orgRole: "admin",
      errors: [...ADMIN],
      params: RefParams,
      body: Body({ deploy_blocked: Type.Boolean() }),
      response: { 200: Department },
      handler: async (request) =>
        departmentView(
          await svc.setDeployBlocked(
            callerOf(request),
            orgOf(request),
            request.params.code,
            request.body.deploy_blocked,
          ),
        ),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/members/sync",
      operationId: "syncOrgMembers",
      tags,
      summary:
        "JSON sync by e-mail (admin, account): sets existing members' role and department with a result per item (update, skip, delete, member_not_found, error); idempotent. Nobody joins this way (member_not_found). implicit_deletion removes unlisted members (never the owner nor the caller), their company assets passing to the owner. Each change and removal follows PATCH/DELETE /v1/org/members/{id}: an admin granting or revoking admin, or changing or removing an admin, is the item's error forbidden_role.",
      summaryKo: "HR 시스템의 구성원을 이메일 기준으로 동기화(역할·부서, 항목별 결과). 계정은 만들지 않습니다.",
      auth: account,
      orgRole: "admin",
      errors: [...ADMIN],
      body: MembersSyncBody,
      response: { 200: MembersSyncAnswer },
      options: { bodyLimit: SYNC_BODY_LIMIT },
      handler: async (request) =>
        svc.syncMembers(
          callerOf(request),
          orgOf(request),
          request.body.members,
          request.body.implicit_deletion ?? false,
        ),
    }),
  );

  csvRoutes(app, svc);
  registerRoutes(app, routes);
}

/** The two CSV uploads take a text/csv body (this plugin alone parses it) or JSON {"csv": "..."}. */
function csvRoutes(app: FastifyInstance, svc: ChartService): void {
  void app.register(async (csv) => {
    csv.addContentTypeParser("text/csv", { parseAs: "string" }, (_request, body, done) => done(null, body));
    const routes: Route[] = [];

    routes.push(
      route({
        method: "POST",
        url: "/v1/org/departments/csv",
        operationId: "uploadOrgDepartmentsCsv",
        tags,
        summary:
          "CSV upload (admin) with the header row code,name,parent_code,approver_email, as a text/csv body or JSON {csv}: inserts and updates departments (never deletes), a parent on an earlier line or already in the chart; a mistake is 400 naming the line.",
        summaryKo: "부서 CSV 업로드(code,name,parent_code,approver_email; 상위 부서가 먼저).",
        auth: write,
        orgRole: "admin",
        errors: [...ADMIN],
        document: { body: csvBody("code,name,parent_code,approver_email") },
        response: { 200: DepartmentsSyncAnswer },
        options: { bodyLimit: SYNC_BODY_LIMIT },
        handler: async (request) => svc.csv(callerOf(request), orgOf(request), csvText(request)),
      }),
    );

    routes.push(
      route({
        method: "POST",
        url: "/v1/org/members/csv",
        operationId: "uploadOrgMembersCsv",
        tags,
        summary:
          "CSV upload (admin, account) with the header row email,department_code,role, as a text/csv body or JSON {csv}: sets existing members' department (empty: none) and role (empty: unchanged), results as the member sync's; never removes anyone.",
        summaryKo: "구성원 CSV(email,department_code,role)로 기존 구성원의 부서·역할을 바꿉니다.",
        auth: account,
        orgRole: "admin",
        errors: [...ADMIN],
        document: { body: csvBody("email,department_code,role") },
        response: { 200: MembersSyncAnswer },
        options: { bodyLimit: SYNC_BODY_LIMIT },
        handler: async (request) => svc.membersCsv(callerOf(request), orgOf(request), csvText(request)),
      }),
    );
    registerRoutes(csv, routes);
  });
}
