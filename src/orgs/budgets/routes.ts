import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
import type { BudgetRow } from "./repo.js";
import type { BudgetsService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const Scope = Type.Union([Type.Literal("company"), Type.Literal("department"), Type.Literal("member")]);
const Mode = Type.Union([Type.Literal("warn"), Type.Literal("block")], {
  description: "warn: the owner and admins get a mail at 80% and 100%; block: paid creation stops at 100% (402)",
});

const Budget = Type.Object({
  id: Type.String(),
  scope: Scope,
  department_id: Nullable(Type.String()),
  department_code: Nullable(Type.String()),
  department_name: Nullable(Type.String()),
  member_id: Nullable(Type.String()),
  email: Nullable(Type.String()),
  amount_krw: Type.Integer(),
  mode: Mode,
  month: Type.String({ description: "the UTC calendar month consumption is counted in, YYYY-MM" }),
  consumed_krw: Type.Integer({ description: "usage of company assets this month (whole KRW, rounded down)" }),
  percent: Type.Number({ description: "consumed_krw / amount_krw × 100, one decimal, rounded down" }),
  exceeded: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const budgetView = (b: BudgetRow & { month: string; consumed_krw: number }) => ({
  id: b.id,
  scope: b.scope,
  department_id: b.department_id,
  department_code: b.department_code,
  department_name: b.department_name,
  member_id: b.account_id,
  email: b.email,
  amount_krw: Number(b.amount_krw),
  mode: b.mode,
  month: b.month,
  consumed_krw: b.consumed_krw,
  percent: Math.floor((b.consumed_krw * 1000) / Number(b.amount_krw)) / 10,
  exceeded: b.consumed_krw >= Number(b.amount_krw),
  created_at: b.created_at.toISOString(),
  updated_at: b.updated_at.toISOString(),
});

/** GET/PUT /v1/org/budgets and DELETE /v1/org/budgets/{id}: monthly budgets in KRW (README.md here). */
export function budgetRoutes(app: FastifyInstance, svc: BudgetsService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/budgets",
      operationId: "listOrgBudgets",
      tags,
      summary:
        "Monthly budgets with this month's consumption (company, department, member); admins see every budget, members those that apply to them.",
      summaryKo: "이번 달 사용액과 함께 월 예산 목록(회사·부서·개인). 구성원은 자신에게 적용되는 예산만 봅니다.",
      auth: read,
      orgRole: "member",
      response: { 200: Type.Object({ items: Type.Array(Budget) }) },
      handler: async (request) => ({
        items: (await svc.list(orgOf(request), callerOf(request).accountId)).map(budgetView),
      }),
    }),
  );

  routes.push(
    route({
      method: "PUT",
      url: "/v1/org/budgets",
      operationId: "putOrgBudget",
      tags,
      summary:
        "Set a monthly budget in KRW (admin), one per target: company, a department (department_code or department_id; its sub-departments count in it) or a member (member_id or email); mode warn or block.",
      summaryKo: "예산 설정(관리자): 범위(회사·부서·개인), 월 금액(원), 모드 warn 또는 block. 대상마다 하나.",
      auth: write,
      orgRole: "admin",
      errors: ["unknown_department"],
      body: Body({
        scope: Scope,
        department_code: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        department_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        member_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
        amount_krw: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }),
        mode: Mode,
      }),
      response: { 200: Budget, 201: Budget },
      handler: async (request, reply) => {
        const { budget, created } = await svc.put(callerOf(request), orgOf(request), request.body);
        return reply.code(created ? 201 : 200).send(budgetView(budget));
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/budgets/:id",
      operationId: "deleteOrgBudget",
      tags,
      summary: "Delete a budget (admin).",
      summaryKo: "예산을 지웁니다(관리자).",
      auth: write,
      orgRole: "admin",
      params: IdParams,
      response: { 200: Type.Object({ deleted: Type.Boolean(), id: Type.String() }) },
      handler: async (request) => svc.remove(callerOf(request), orgOf(request), request.params.id),
    }),
  );
  registerRoutes(app, routes);
}
