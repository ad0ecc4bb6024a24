import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
import { CARD_SAVE_ERRORS, CardCredentials } from "../../billing/public.js";
import type { InvoicesService } from "./service.js";
import {
  BillingState,
  billingStateView,
  Card,
  cardView,
  Invoice,
  InvoiceDetail,
  invoiceDetailView,
  invoiceView,
} from "./schemas.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

/** POST/DELETE /v1/org/billing/card and GET /v1/org/invoices[/{id}] (README, "Invoices, card, bank transfers ..."). */
export function invoiceRoutes(app: FastifyInstance, svc: InvoicesService): void {
  const routes: Route[] = [];

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/billing/card",
      operationId: "registerOrgCard",
      tags,
      summary:
        "Register the organization card (owner): full pay-as-you-go from now, the previous month's invoice charged to it at the start of each month. toss: auth_key of the card registration window; stripe: payment_method (pm_…). Registering again replaces the card and retries unpaid invoices.",
      summaryKo:
        "조직 카드를 등록합니다(소유자). 등록 시점부터 사용량 후불(종량제), 매월 초 지난달 청구서를 카드로 자동 결제합니다.",
      auth: write,
      orgRole: "owner",
      errors: ["conflict", ...CARD_SAVE_ERRORS],
      body: Body({
        provider: Type.Union([Type.Literal("stripe"), Type.Literal("toss")], {
          description: "toss (KRW billing key) or stripe (PaymentMethod, charged in KRW)",
        }),
        ...CardCredentials,
      }),
      response: { 201: Type.Object({ ...BillingState, card: Card }) },
      handler: async (request, reply) => {
        const s = await svc.register(callerOf(request), orgOf(request), request.body);
        return reply.code(201).send({ ...billingStateView(s), card: cardView(s.card)! });
      },
    }),
  );

  routes.push(
    route({
      method: "DELETE",
      url: "/v1/org/billing/card",
      operationId: "removeOrgCard",
      tags,
      summary:
        "Remove the organization card (owner): 409 while invoices are unpaid. Card billing ends: the months not invoiced yet and the month so far are invoiced and charged at once (409 when that charge fails: the card stays for the retries), then the card is forgotten and the previous billing mode returns.",
      summaryKo:
        "조직 카드를 삭제합니다(소유자). 미납 청구서가 있으면 409. 이번 달 사용분은 마감 청구서로 즉시 결제합니다.",
      auth: write,
      orgRole: "owner",
      errors: ["conflict"],
      response: {
        200: Type.Object({
          removed: Type.Boolean(),
          billing_mode: Type.String(),
          final_invoices: Type.Array(Invoice),
        }),
      },
      handler: async (request) => {
        const done = await svc.remove(callerOf(request), orgOf(request));
        return { ...done, final_invoices: done.final_invoices.map(invoiceView) };
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/invoices",
      operationId: "listOrgInvoices",
      tags,
      summary:
        "Monthly invoices (newest first) with card and payment status, and the organization's billing mode and card; ?limit=&cursor=.",
      summaryKo: "월별 청구서 목록: 카드와 결제 상태.",
      auth: read,
      orgRole: "member",
      query: Type.Object(
        {
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 24 })),
          cursor: Type.Optional(Type.String({ format: "uuid" })),
        },
        { additionalProperties: false },
      ),
      response: {
        200: Type.Object({
          ...BillingState,
          items: Type.Array(Invoice),
          next_cursor: Nullable(Type.String()),
        }),
      },
      handler: async (request) => {
        const page = await svc.list(orgOf(request), request.query.limit ?? 24, request.query.cursor);
        return { ...billingStateView(page), items: page.items.map(invoiceView), next_cursor: page.next_cursor };
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/invoices/:id",
      operationId: "getOrgInvoice",
      tags,
      summary:
        "One invoice with that period's usage by member (who created the assets) and kind, in exact micro-won; another organization's id is 404.",
      summaryKo: "청구서 상세: 그 달의 구성원별·종류별 사용량.",
      auth: read,
      orgRole: "member",
      params: IdParams,
      response: { 200: InvoiceDetail },
      handler: async (request) => {
        const { invoice, lines } = await svc.get(orgOf(request), request.params.id);
        return invoiceDetailView(invoice, lines);
      },
    }),
  );
  registerRoutes(app, routes);
}
