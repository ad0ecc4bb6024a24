import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import { IdParams, orgOf, read, tags, write } from "../public.js";
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

const PROVIDER_ERRORS = [
  "provider_unavailable",
  "provider_error",
  "invalid_payment_method",
  "payment_failed",
  "auth_key_required",
  "invalid_auth_key",
  "card_save_in_progress",
] as const;

/** POST/DELETE /v1/org/billing/card and GET /v1/org/invoices[/{id}] (README, "Invoices, card, bank transfers ..."). */
export function invoiceRoutes(app: FastifyInstance, svc: InvoicesService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    "/v1/org/billing/card",
    {
      config: {
        auth: write,
        orgRole: "owner",
        errors: ["not_found", "forbidden_role", "conflict", ...PROVIDER_ERRORS],
        summaryKo:
          "조직 카드를 등록합니다(소유자). 등록 시점부터 사용량 후불(종량제), 매월 초 지난달 청구서를 카드로 자동 결제합니다.",
      },
      schema: {
        operationId: "registerOrgCard",
        tags,
        summary:
          "Register the organization card (owner): full pay-as-you-go from now, the previous month's invoice charged to it at the start of each month. toss: auth_key of the card registration window; stripe: payment_method (pm_…). Registering again replaces the card and retries unpaid invoices.",
        body: Body({
          provider: Type.Union([Type.Literal("stripe"), Type.Literal("toss")], {
            description: "toss (KRW billing key) or stripe (PaymentMethod, charged in KRW)",
          }),
          payment_method: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          auth_key: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
        }),
        response: { 201: Type.Object({ ...BillingState, card: Card }) },
      },
    },
    async (request, reply) => {
      const s = await svc.register(callerOf(request), orgOf(request), request.body);
      return reply.code(201).send({ ...billingStateView(s), card: cardView(s.card)! });
    },
  );

  r.delete(
    "/v1/org/billing/card",
    {
      config: {
        auth: write,
        orgRole: "owner",
        errors: ["not_found", "forbidden_role", "conflict"],
        summaryKo:
          "조직 카드를 삭제합니다(소유자). 미납 청구서가 있으면 409. 이번 달 사용분은 마감 청구서로 즉시 결제합니다.",
      },
      schema: {
        operationId: "removeOrgCard",
        tags,
        summary:
          "Remove the organization card (owner): 409 while invoices are unpaid. Card billing ends: the months not invoiced yet and the month so far are invoiced and charged at once (409 when that charge fails: the card stays for the retries), then the card is forgotten and the previous billing mode returns.",
        response: {
          200: Type.Object({
            removed: Type.Boolean(),
            billing_mode: Type.String(),
            final_invoices: Type.Array(Invoice),
          }),
        },
      },
    },
    async (request) => {
      const done = await svc.remove(callerOf(request), orgOf(request));
      return { ...done, final_invoices: done.final_invoices.map(invoiceView) };
    },
  );

  r.get(
    "/v1/org/invoices",
    {
      config: {
        auth: read,
        orgRole: "member",
        errors: ["not_found"],
        summaryKo: "월별 청구서 목록: 카드와 결제 상태.",
      },
      schema: {
        operationId: "listOrgInvoices",
        tags,
        summary:
          "Monthly invoices (newest first) with card and payment status, and the organization's billing mode and card; ?limit=&cursor=.",
        querystring: Type.Object(
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
      },
    },
    async (request) => {
      const page = await svc.list(orgOf(request), request.query.limit ?? 24, request.query.cursor);
      return { ...billingStateView(page), items: page.items.map(invoiceView), next_cursor: page.next_cursor };
    },
  );

  r.get(
    "/v1/org/invoices/:id",
    {
      config: {
        auth: read,
        orgRole: "member",
        errors: ["not_found"],
        summaryKo: "청구서 상세: 그 달의 구성원별·종류별 사용량.",
      },
      schema: {
        operationId: "getOrgInvoice",
        tags,
        summary:
          "One invoice with that period's usage by member (who created the assets) and kind, in exact micro-won; another organization's id is 404.",
        params: IdParams,
        response: { 200: InvoiceDetail },
      },
    },
    async (request) => {
      const { invoice, lines } = await svc.get(orgOf(request), request.params.id);
      return invoiceDetailView(invoice, lines);
    },
  );
}
