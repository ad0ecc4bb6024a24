import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { partnerOf } from "../guard.js";
import { PARTNER_ERRORS, read, tags } from "../schemas.js";
import type { BillingService } from "./service.js";

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
export function partnerBillingRoutes(app: FastifyInstance, svc: BillingService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    "/v1/partner/invoices",
    {
      config: { auth: read, errors: [...PARTNER_ERRORS], summaryKo: "파트너 월별 청구서 목록." },
      schema: {
        operationId: "listPartnerInvoices",
        tags,
        summary: "The partner's monthly invoices (partner_postpaid), newest first.",
        response: { 200: Type.Object({ invoices: Type.Array(Invoice) }) },
      },
    },
    async (request) => svc.invoices(partnerOf(request).account_id),
  );

  r.get(
    "/v1/partner/invoices/:id",
    {
      config: { auth: read, errors: [...PARTNER_ERRORS, "not_found"], summaryKo: "청구서와 자식별 명세." },
      schema: {
        operationId: "getPartnerInvoice",
        tags,
        summary: "One invoice with its statement per child.",
        params: InvoiceId,
        response: { 200: Type.Intersect([Invoice, Type.Object({ statements: Type.Array(Statement) })]) },
      },
    },
    async (request) => svc.invoice(partnerOf(request).account_id, request.params.id),
  );

  r.get(
    "/v1/partner/usage",
    {
      config: { auth: read, errors: [...PARTNER_ERRORS, "invalid_request"], summaryKo: "자식별 월 사용량." },
      schema: {
        operationId: "getPartnerUsage",
        tags,
        summary:
          "Settled usage per child in period=YYYY-MM (default: the current UTC month); settlement runs 5-10 minutes behind.",
        querystring: Type.Object({ period: Type.Optional(Type.String({ maxLength: 20 })) }),
        response: {
          200: Type.Object({
            period: Type.String(),
            currency: Type.String(),
            total_micro: Type.Integer(),
            children: Type.Array(Statement),
          }),
        },
      },
    },
    async (request) => svc.usage(partnerOf(request).account_id, request.query.period),
  );

  r.get(
    "/v1/operator/partner-invoices",
    {
      config: { auth: { operator: true }, errors: ["invalid_request"] },
      schema: {
        operationId: "operatorListPartnerInvoices",
        tags: ["operator"],
        summary: "Partner invoices of every partner, newest first; ?status=unpaid lists those still owed.",
        querystring: Type.Object({ status: Type.Optional(Type.Union([Type.Literal("unpaid"), Type.Literal("paid")])) }),
        response: { 200: Type.Object({ invoices: Type.Array(Invoice) }) },
      },
    },
    async (request) => svc.operatorList(request.query.status),
  );

  r.post(
    "/v1/operator/partner-invoices/:id/paid",
    {
      config: { auth: { operator: true }, errors: ["not_found"] },
      schema: {
        operationId: "operatorMarkPartnerInvoicePaid",
        tags: ["operator"],
        summary: "Records the payment of a partner invoice: the partner's wallet is credited by the total, once.",
        params: InvoiceId,
        response: { 200: Invoice },
      },
    },
    async (request) => svc.operatorMarkPaid(request.principal, request.params.id),
  );

  r.post(
    "/v1/operator/partners/:account_id/adjustments",
    {
      config: { auth: { operator: true }, errors: ["not_found", "invalid_request"] },
      schema: {
        operationId: "operatorAdjustPartner",
        tags: ["operator"],
        summary:
          "A refund or reduction for a partner: credits its postpaid wallet; the month's invoice subtracts it as adjustment_microusd.",
        params: Type.Object({ account_id: Type.String({ format: "uuid" }) }),
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
      },
    },
    async (request, reply) => {
      reply.code(201);
      return svc.operatorAdjust(request.principal, request.params.account_id, request.body);
    },
  );
}
