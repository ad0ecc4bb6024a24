import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { Body, Nullable, Timestamp } from "../../http/schemas.js";
import { MAX_PENDING, type bankTransferService } from "./service.js";
import type { BankTransferRow } from "./repo.js";
import type { Principal } from "../../auth/principal.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

const read = { scope: "billing:read" } as const;
const write = { scope: "billing:write" } as const;
const operator = { operator: true } as const;
const Params = Type.Object({ id: Type.String({ format: "uuid" }) });
export const Status = Type.Union([
  Type.Literal("pending"),
  Type.Literal("confirmed"),
  Type.Literal("cancelled"),
  Type.Literal("rejected"),
]);

export const TaxInvoice = Type.Object(
  {
    business_number: Type.String({
      minLength: 10,
      maxLength: 12,
      description: "사업자등록번호, 10 digits (hyphens allowed) with a valid check digit",
    }),
    company_name: Type.String({ minLength: 1, maxLength: 100 }),
    representative: Type.String({ minLength: 1, maxLength: 50 }),
    email: Type.String({ format: "email", maxLength: 254, description: "where the tax invoice is sent" }),
    address: Type.Optional(Type.String({ maxLength: 300 })),
    business_type: Type.Optional(Type.String({ maxLength: 100, description: "업태" })),
    business_item: Type.Optional(Type.String({ maxLength: 100, description: "종목" })),
  },
  { additionalProperties: false },
);

export const BankTransfer = Type.Object({
  id: Type.String(),
  amount_krw: Type.Integer(),
  depositor_name: Type.String(),
  receipt_type: Type.Union([Type.Literal("none"), Type.Literal("tax_invoice")]),
  tax_invoice: Nullable(TaxInvoice),
  status: Status,
  deposit_reported_at: Nullable(Timestamp),
  reject_reason: Nullable(Type.String()),
  decided_at: Nullable(Timestamp),
  created_at: Timestamp,
});
const OperatorBankTransfer = Type.Composite([
  BankTransfer,
  Type.Object({ account_id: Type.String(), credit_transaction_id: Nullable(Type.String()) }),
]);

export const view = (t: BankTransferRow) => ({
  id: t.id,
  amount_krw: t.amount_krw,
  depositor_name: t.depositor_name,
  receipt_type: t.receipt_type,
  tax_invoice: t.tax_invoice,
  status: t.status,
  deposit_reported_at: t.deposit_reported_at?.toISOString() ?? null,
  reject_reason: t.reject_reason,
  decided_at: t.decided_at?.toISOString() ?? null,
  created_at: t.created_at.toISOString(),
});
const operatorView = (t: BankTransferRow) => ({
  ...view(t),
  account_id: t.account_id,
  credit_transaction_id: t.credit_transaction_id,
});

export const ListQuery = Type.Object(
  {
    status: Type.Optional(Status),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ format: "uuid" })),
  },
  { additionalProperties: false },
);

/** What the bank-transfer config answers (personal, and the organization's with its mode beside it). */
export const BankTransferConfigFields = {
  deposit_account: Nullable(
    Type.Object({
      bank_name: Nullable(Type.String()),
      account_number: Type.String(),
      account_holder: Nullable(Type.String()),
    }),
  ),
  min_amount_krw: Type.Integer(),
  max_amount_krw: Type.Integer(),
  max_pending: Type.Integer(),
  business_info: Nullable(TaxInvoice),
};

/** The bank-transfer config answer: the deposit account (null until one is configured), limits, business details. */
export const bankTransferConfigView = (
  b: {
    bankName: string | null;
    accountNumber: string | null;
    accountHolder: string | null;
    minKrw: number;
    maxKrw: number;
  },
  business: Static<typeof TaxInvoice> | null,
) => ({
  deposit_account: b.accountNumber
    ? { bank_name: b.bankName, account_number: b.accountNumber, account_holder: b.accountHolder }
    : null,
  min_amount_krw: b.minKrw,
  max_amount_krw: b.maxKrw,
  max_pending: MAX_PENDING,
  business_info: business,
});

/** A top-up request's body (personal, and the organization wallet's: POST /v1/org/bank-transfers). */
export const BankTransferRequest = Body({
  amount_krw: Type.Integer({ minimum: 1 }),
  depositor_name: Type.String({ minLength: 1, maxLength: 50 }),
  receipt_type: Type.Union([Type.Literal("none"), Type.Literal("tax_invoice")]),
  tax_invoice: Type.Optional(TaxInvoice),
});
/** What a top-up request can be refused with, whoever's wallet it is for. */
export const BANK_TRANSFER_REQUEST_ERRORS = [
  "bank_transfer_unavailable",
  "amount_out_of_range",
  "tax_invoice_required",
  "invalid_business_number",
  "too_many_pending",
] as const;
/** The body of deposit-reported: the depositor's name may be corrected. */
export const DepositReport = Body({ depositor_name: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })) });

/** One page of requests, newest first, from a list query (?status=&limit=&cursor=). */
export async function bankTransferPage<T>(
  query: Static<typeof ListQuery>,
  list: (q: { status?: Static<typeof Status>; limit: number; afterId?: string }) => Promise<BankTransferRow[]>,
  map: (t: BankTransferRow) => T,
): Promise<{ items: T[]; next_cursor: string | null }> {
  const limit = query.limit ?? 50;
  const rows = await list({ status: query.status, limit, afterId: query.cursor });
  return { items: rows.map(map), next_cursor: rows.length === limit ? rows[rows.length - 1].id : null };
}

/** Bank-transfer top-up requests, and the operator's confirm/reject. */
export async function bankTransferRoutes(app: FastifyInstance, bank: ReturnType<typeof bankTransferService>) {
  const routes: Route[] = [];
  /** One page of requests (the caller's, or every account's for the operator: `principal` null). */
  const listPage = <T>(principal: Principal | null, query: Static<typeof ListQuery>, map: (t: BankTransferRow) => T) =>
    bankTransferPage(query, (q) => bank.list(principal, q), map);

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/bank-transfer/config",
      operationId: "getBankTransferConfig",
      tags: ["billing"],
      summary: "Deposit account, amount limits and the business details last used for a tax invoice.",
      summaryKo: "무통장 입금 계좌, 최소·최대 금액, 저장된 사업자 정보.",
      auth: read,
      response: {
        200: Type.Object(BankTransferConfigFields),
      },
      handler: async (request) => {
        const { bank: b, business } = await bank.config(request.principal!);
        return bankTransferConfigView(b, business);
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/bank-transfers",
      operationId: "listBankTransfers",
      tags: ["billing"],
      summary: "Own bank-transfer top-up requests, newest first; ?status=&limit=&cursor=.",
      summaryKo: "내 무통장 입금 충전 요청 목록(pending, confirmed, cancelled, rejected).",
      auth: read,
      query: ListQuery,
      response: { 200: Type.Object({ items: Type.Array(BankTransfer), next_cursor: Nullable(Type.String()) }) },
      handler: async (request) => listPage(request.principal!, request.query, view),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/bank-transfers",
      operationId: "createBankTransfer",
      tags: ["billing"],
      summary:
        "Request a bank-transfer top-up {amount_krw, depositor_name, receipt_type none|tax_invoice, tax_invoice{business info}}; the wallet is credited after operator confirmation.",
      summaryKo: "무통장 입금 충전을 요청합니다. 운영자 확인 후 충전됩니다. 세금계산서는 사업자등록번호 검증.",
      auth: write,
      errors: [...BANK_TRANSFER_REQUEST_ERRORS],
      body: BankTransferRequest,
      response: { 201: BankTransfer },
      handler: async (request, reply) =>
        reply.code(201).send(view(await bank.create(request.principal!, request.body))),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/bank-transfers/:id",
      operationId: "getBankTransfer",
      tags: ["billing"],
      summary: "One bank-transfer request.",
      summaryKo: "무통장 입금 요청 하나.",
      auth: read,
      params: Params,
      response: { 200: BankTransfer },
      handler: async (request) => view(await bank.get(request.principal!, request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/bank-transfers/:id/cancel",
      operationId: "cancelBankTransfer",
      tags: ["billing"],
      summary: "Cancel a pending request before the deposit (not after deposit-reported).",
      summaryKo: "입금 전(입금 알림 전)에 요청을 취소합니다.",
      auth: write,
      errors: ["invalid_state", "deposit_reported"],
      params: Params,
      response: { 200: BankTransfer },
      handler: async (request) => view(await bank.cancel(request.principal!, request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/billing/bank-transfers/:id/deposit-reported",
      operationId: "reportBankDeposit",
      tags: ["billing"],
      summary: "Report the deposit for operator matching; depositor_name may be corrected.",
      summaryKo: "입금했음을 알립니다(운영자 대조용). 입금자명을 바꿀 수 있습니다.",
      auth: write,
      errors: ["invalid_state"],
      params: Params,
      body: DepositReport,
      response: { 200: BankTransfer },
      handler: async (request) =>
        view(await bank.reportDeposit(request.principal!, request.params.id, request.body.depositor_name)),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/operator/bank-transfers",
      operationId: "operatorListBankTransfers",
      tags: ["operator"],
      summary: "Bank-transfer requests of every account, newest first; ?status=pending for matching.",
      auth: operator,
      query: ListQuery,
      response: {
        200: Type.Object({ items: Type.Array(OperatorBankTransfer), next_cursor: Nullable(Type.String()) }),
      },
      handler: async (request) => listPage(null, request.query, operatorView),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/operator/bank-transfers/:id/confirm",
      operationId: "operatorConfirmBankTransfer",
      tags: ["operator"],
      summary: "The deposit arrived: credit the wallet (once) and mark the request confirmed.",
      auth: operator,
      errors: ["invalid_state"],
      params: Params,
      response: { 200: OperatorBankTransfer },
      handler: async (request) => operatorView(await bank.confirm(request.principal, request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/operator/bank-transfers/:id/reject",
      operationId: "operatorRejectBankTransfer",
      tags: ["operator"],
      summary: "Close a pending request without credit.",
      auth: operator,
      errors: ["invalid_state"],
      params: Params,
      body: Body({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }),
      response: { 200: OperatorBankTransfer },
      handler: async (request) =>
        operatorView(await bank.reject(request.principal, request.params.id, request.body.reason)),
    }),
  );
  registerRoutes(app, routes);
}
