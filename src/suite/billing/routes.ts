import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { route, type Route } from "../../http/route.js";
import { orgOf, read, write } from "../../orgs/public.js";
import type { SuiteBillingService } from "./service.js";

const Allowance = Type.Object({
  limit_krw: Type.Integer(),
  used_krw: Type.Integer(),
  remaining_krw: Type.Integer(),
  resets_at: Nullable(Type.String()),
  contact: Nullable(Type.String()),
  checked_at: Type.String({ description: "when the suite last answered it" }),
});

const SuiteBilling = Type.Object({
  stop_on_exhausted: Type.Boolean(),
  company_id: Type.String(),
  members: Type.Array(
    Type.Object({
      account_id: Type.String(),
      suite_user_id: Nullable(Type.String()),
      email: Nullable(Type.String()),
      allowance: Nullable(Allowance),
      paused: Type.Boolean({ description: "stop-on-exhausted paused this member's company apps and databases" }),
      paused_at: Nullable(Type.String()),
      paused_resources: Type.Array(Type.String(), { description: "ids of the pods and databases the suite paused" }),
      last_report: Nullable(
        Type.Object({
          hour: Type.String(),
          amount_krw: Type.Integer(),
          status: Type.String({ description: "pending (sent again until the suite takes it) or reported" }),
          reported_at: Nullable(Type.String()),
          last_error: Nullable(Type.String()),
        }),
      ),
    }),
  ),
});

const tags = ["suite"];
const ERRORS = ["not_found", "suite_not_configured"] as const;

/** PUT/GET /v1/org/suite/billing (src/suite/README.md, "Billing"). */
export function suiteBillingRoutes(svc: SuiteBillingService): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/org/suite/billing",
      operationId: "getOrgSuiteBilling",
      tags,
      summary:
        "Suite billing: stop_on_exhausted and each member's status (last allowance, paused or not, last usage report); a member sees only their own. 404 outside a suite-linked organization.",
      summaryKo: "스위트 과금 설정(stop_on_exhausted)과 구성원별 상태(한도, 일시정지 여부, 마지막 사용량 보고).",
      auth: read,
      orgRole: "member",
      errors: [...ERRORS],
      response: { 200: SuiteBilling },
      handler: async (request) => svc.status(callerOf(request), orgOf(request)),
    }),
    route({
      method: "PUT",
      url: "/v1/org/suite/billing",
      operationId: "setOrgSuiteBilling",
      tags,
      summary:
        "Admin: stop_on_exhausted. On: a member whose suite allowance is used up has their paid company apps paused and databases stopped until it is back. Off (default): running apps keep running; what the suite paused resumes now.",
      summaryKo:
        "관리자: 한도 소진 시 중지(stop_on_exhausted). 켜면 한도를 다 쓴 구성원의 앱과 데이터베이스를 멈추고, 한도가 돌아오면 다시 시작합니다.",
      auth: write,
      orgRole: "admin",
      errors: [...ERRORS],
      body: Body({ stop_on_exhausted: Type.Boolean() }),
      response: { 200: SuiteBilling },
      handler: async (request) => svc.update(callerOf(request), orgOf(request), request.body.stop_on_exhausted),
    }),
  ];
}
