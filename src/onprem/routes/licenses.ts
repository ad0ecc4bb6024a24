import { Type } from "@sinclair/typebox";
import { callerOf } from "../../auth/principal.js";
import { Body } from "../../http/schemas.js";
import type { LicensesService } from "../licenses-service.js";
import type { OrdersService } from "../orders-service.js";
import {
  account,
  Customer,
  IdParams,
  License,
  LicenseFile,
  licenseView,
  Order,
  orderView,
  ScopeField,
  tags,
  withScope,
} from "./schemas.js";
import { route, type Route } from "../../http/route.js";

const GATES = ["onprem_approval_required", "terms_required"] as const;

/** Trial, licenses and their files, orders and their confirmation. */
export function licenseRoutes(svc: { licenses: LicensesService; orders: OrdersService }): Route[] {
  return [
    route({
      method: "POST",
      url: "/v1/onprem/licenses/trial",
      operationId: "createOnpremTrial",
      tags,
      summary:
        "A trial license (ONPREM_TRIAL_DAYS days, ONPREM_TRIAL_HOSTS hosts): once per owner, 409 afterwards, also after it expired. Needs approval (403) and the current terms (412).",
      summaryKo: "체험판 라이선스(소유자당 한 번, 만료 후에도 다시 받을 수 없음).",
      auth: account,
      errors: ["not_found", "forbidden_role", "conflict", ...GATES],
      body: Body({ customer: Customer, scope: Type.Optional(ScopeField) }),
      response: { 201: License },
      handler: async (request, reply) =>
        reply.code(201).send(licenseView(await svc.licenses.trial(callerOf(request), withScope(request.body)))),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/licenses",
      operationId: "listOnpremLicenses",
      tags,
      summary: "Licenses of the caller and of the caller's organization, newest first.",
      summaryKo: "호출자와 호출자 조직의 라이선스.",
      auth: account,
      response: { 200: Type.Array(License) },
      handler: async (request) => (await svc.licenses.list(callerOf(request))).map((l) => licenseView(l)),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/licenses/:id/file",
      operationId: "getOnpremLicenseFile",
      tags,
      summary:
        "The signed license file as issued ({license, signature, key_id}), as an attachment; ?inline=1 returns it as the JSON body.",
      summaryKo: "서명된 라이선스 파일 내려받기. ?inline=1 이면 JSON 본문으로.",
      auth: account,
      params: IdParams,
      query: Type.Object({
        inline: Type.Optional(
          Type.Union([Type.Literal("1"), Type.Literal("0"), Type.Literal("true"), Type.Literal("false")]),
        ),
      }),
      response: { 200: LicenseFile },
      handler: async (request, reply) => {
        const row = await svc.licenses.get(callerOf(request), request.params.id);
        const inline = request.query.inline === "1" || request.query.inline === "true";
        if (!inline) reply.header("content-disposition", `attachment; filename="license-${row.id}.json"`);
        // the stored text, byte for byte as signed and issued (a string with a JSON type is sent unserialized)
        return reply.type("application/json; charset=utf-8").send(row.file as never);
      },
    }),
    route({
      method: "POST",
      url: "/v1/onprem/orders",
      operationId: "createOnpremOrder",
      tags,
      summary:
        "Order a license (hosts x months at the configured price; renew_of extends that license from its end): the server computes the amount and returns the Toss payment window's parameters (orderId, amount, orderName, customerKey). Needs approval (403) and the current terms (412).",
      summaryKo: "라이선스 주문: 서버가 금액을 계산하고 토스 결제창 파라미터를 돌려줍니다.",
      auth: account,
      errors: ["not_found", "forbidden_role", "provider_unavailable", "amount_out_of_range", ...GATES],
      body: Body({
        hosts: Type.Integer({ minimum: 1, maximum: 100_000 }),
        months: Type.Integer({ minimum: 1, maximum: 120 }),
        customer: Customer,
        scope: Type.Optional(ScopeField),
        renew_of: Type.Optional(Type.Union([Type.String({ format: "uuid" }), Type.Null()])),
      }),
      response: { 201: Order },
      handler: async (request, reply) =>
        reply.code(201).send(orderView(await svc.orders.create(callerOf(request), withScope(request.body)))),
    }),
    route({
      method: "GET",
      url: "/v1/onprem/orders/:id",
      operationId: "getOnpremOrder",
      tags,
      summary: "An order's status (pending, paid), its license once issued and the last refused attempt.",
      summaryKo: "주문 상태.",
      auth: account,
      params: IdParams,
      response: { 200: Order },
      handler: async (request) => orderView(await svc.orders.get(callerOf(request), request.params.id)),
    }),
    route({
      method: "POST",
      url: "/v1/onprem/orders/:id/confirm",
      operationId: "confirmOnpremOrder",
      tags,
      summary:
        "Confirm the payment through Toss's confirm API and issue the license exactly once (concurrent confirms issue one). amount_krw and order_id must match the order (400, nothing issued). The sale is recorded in the ledger.",
      summaryKo: "결제를 토스 승인 API로 확정하고 라이선스를 한 번만 발급합니다.",
      auth: account,
      errors: [
        "forbidden_role",
        "conflict",
        "invalid_payment_key",
        "payment_rejected",
        "payment_failed",
        "provider_error",
        "provider_unavailable",
      ],
      params: IdParams,
      body: Body({
        payment_key: Type.String({ minLength: 1, maxLength: 200 }),
        order_id: Type.String({ minLength: 1, maxLength: 64 }),
        amount_krw: Type.Integer({ minimum: 1 }),
      }),
      response: { 200: Order },
      handler: async (request) =>
        orderView(await svc.orders.confirm(callerOf(request), request.params.id, request.body)),
    }),
  ];
}
