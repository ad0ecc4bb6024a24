import { Type } from "@sinclair/typebox";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { partnerOf } from "../guard.js";
import { PARTNER_ERRORS, PartnerAccountParams, read, tags } from "../schemas.js";
import type { BillingService } from "./service.js";
import { route, type Route } from "../../http/route.js";

const Micro = (description: string) => Type.Integer({ description });

const Invoice = Type.Object({
  id: Type.String(),
  partner_id: Type.String(),
  month: Type.String({ description: "YYYY-MM (UTC)" }),
  period_start: Timestamp,
  period_end: Timestamp,
  currency: Type.String({ description: "the currency of the amounts (KRW)" }),
  usage_micro: Micro("the children's settled usage, micro-units of currency (the statements' sum)"),
  adjustment_microusd: Micro(
    "refunds and reductions subtracted, micro-units of currency (spec name); usage_micro - adjustment_microusd = total_micro",
  ),
  total_micro: Micro("what the partner owes for the month, micro-units of currency"),
  status: Type.Union([Type.Literal("unpaid"), Type.Literal("paid")]),
  paid_at: Nullable(Timestamp),
  created_at: Timestamp,
});

const Statement = Type.Object({
  child_id: Type.String(),
  external_ref: Type.String(),
  windows: Type.Integer({ description: "5-minute windows with usage" }),
  usage_micro: Micro("the child's settled usage in the month, micro-units of currency"),
});

const InvoiceId = Type.Object({ id: Type.String({ format: "uuid" }) });

/** /v1/partner/invoices, /v1/partner/usage and the operator's partner invoice routes (README.md here). */
export function partnerBillingRoutes(svc: BillingService): Route[] {
  return [
    route({
      method: "GET",
      url: "/v1/partner/invoices",
      operationId: "listPartnerInvoices",
      tags,
      summary: "The partner's monthly invoices (partner_postpaid), newest first.",
      summaryKo: "파트너 월별 청구서 목록.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      response: { 200: Type.Object({ invoices: Type.Array(Invoice) }) },
      handler: async (request) => svc.invoices(partnerOf(request).account_id),
    }),
    route({
      method: "GET",
      url: "/v1/partner/invoices/:id",
      operationId: "getPartnerInvoice",
      tags,
      summary: "One invoice with its statement per child.",
      summaryKo: "청구서와 자식별 명세.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      params: InvoiceId,
      response: { 200: Type.Intersect([Invoice, Type.Object({ statements: Type.Array(Statement) })]) },
      handler: async (request) => svc.invoice(partnerOf(request).account_id, request.params.id),
    }),
    route({
      method: "GET",
      url: "/v1/partner/usage",
      operationId: "getPartnerUsage",
      tags,
      summary:
        "Settled usage per child in period=YYYY-MM (default: the current UTC month); settlement runs 5-10 minutes behind.",
      summaryKo: "자식별 월 사용량.",
      auth: read,
      errors: [...PARTNER_ERRORS],
      query: Type.Object({ period: Type.Optional(Type.String({ maxLength: 20 })) }),
      response: {
        200: Type.Object({
          period: Type.String(),
          currency: Type.String(),
          total_micro: Type.Integer(),
          children: Type.Array(Statement),
        }),
      },
      handler: async (request) => svc.usage(partnerOf(request).account_id, request.query.period),
    }),
    route({
      method: "GET",
      url: "/v1/operator/partner-invoices",
      operationId: "operatorListPartnerInvoices",
      tags: ["operator"],
      summary: "Partner invoices of every partner, newest first; ?status=unpaid lists those still owed.",
      auth: { operator: true },
      query: Type.Object({ status: Type.Optional(Type.Union([Type.Literal("unpaid"), Type.Literal("paid")])) }),
      response: { 200: Type.Object({ invoices: Type.Array(Invoice) }) },
      handler: async (request) => svc.operatorList(request.query.status),
    }),
    route({
      method: "POST",
      url: "/v1/operator/partner-invoices/:id/paid",
      operationId: "operatorMarkPartnerInvoicePaid",
      tags: ["operator"],
      summary: "Records the payment of a partner invoice: the partner's wallet is credited by the total, once.",
      auth: { operator: true },
      params: InvoiceId,
      response: { 200: Invoice },
      handler: async (request) => svc.operatorMarkPaid(request.principal, request.params.id),
    }),
    route({
      method: "POST",
      url: "/v1/operator/partners/:account_id/adjustments",
      operationId: "operatorAdjustPartner",
      tags: ["operator"],
      summary:
        "A refund or reduction for a partner: credits its postpaid wallet; the month's invoice subtracts it as adjustment_microusd.",
      auth: { operator: true },
      params: PartnerAccountParams,
      body: Body({
        amount_krw: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }),
        reason: Type.String({ minLength: 1, maxLength: 500 }),
      }),
      response: {
        201: Type.Object({
          transaction_id: Type.String(),
          partner_id: Type.String(),
          amount_krw: Type.Integer(),
          reason: Type.String(),
          created_at: Timestamp,
        }),
      },
      handler: async (request, reply) => {
        reply.code(201);
        return svc.operatorAdjust(request.principal, request.params.account_id, request.body);
      },
    }),
  ];
}
