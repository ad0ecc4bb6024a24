import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { Body, Nullable } from "../http/schemas.js";
import { partnerOf } from "./guard.js";
import { BillingMode, Partner, PARTNER_ERRORS, PartnerAccountParams, read, tags, write } from "./schemas.js";
import type { PartnerService } from "./service.js";
import { route, type Route } from "../http/route.js";

/** GET/PATCH /v1/partner and the operator's PUT /v1/operator/partners/{account_id} (README.md, "Partner accounts"). */
export function profileRoutes(svc: PartnerService): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/partner",
      operationId: "getPartner",
      tags,
      summary: "The partner profile: billing_mode, monthly limit, this month's usage, child count, visitor_login_url.",
      summaryKo: "파트너 프로필(billing_mode 포함).",
      auth: read,
      errors: [...PARTNER_ERRORS],
      response: { 200: Partner },
      handler: async (request) => svc.view(partnerOf(request)),
    }),
    route({
      method: "PATCH",
      url: "/v1/partner",
      operationId: "updatePartner",
      tags,
      summary:
        "Registers visitor_login_url (https; http only on localhost) and child_scopes, the most a child token may carry (null: the platform's default).",
      summaryKo: "visitor_login_url 등록.",
      auth: write,
      errors: [...PARTNER_ERRORS, "invalid_scope"],
      body: Body({
        visitor_login_url: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2048 }))),
        child_scopes: Type.Optional(
          Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
        ),
      }),
      response: { 200: Partner },
      handler: async (request) => svc.update(callerOf(request), partnerOf(request), request.body),
    }),
    route({
      method: "PUT",
      url: "/v1/operator/partners/:account_id",
      operationId: "operatorSetPartner",
      tags: ["operator"],
      summary:
        "Makes the account a partner, or changes its billing_mode and monthly_limit_krw (partner_postpaid needs a limit: 400).",
      auth: { operator: true },
      params: PartnerAccountParams,
      body: Body({
        billing_mode: Type.Optional(BillingMode),
        monthly_limit_krw: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }))),
      }),
      response: { 200: Partner },
      handler: async (request) => svc.operatorSet(request.params.account_id, request.body),
    }),
  ];
}
