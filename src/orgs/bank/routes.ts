import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../kernel/context.js";
import { callerOf } from "../../auth/principal.js";
import { Body, Nullable } from "../../http/schemas.js";
import {
  BankTransfer,
  BankTransferConfigFields,
  BankTransferListQuery as ListQuery,
  bankTransferView as view,
  MAX_PENDING,
  TaxInvoice,
} from "../../billing/public.js";
import { orgOf, read, tags, write } from "../public.js";
import { orgBankService } from "./service.js";

const Params = Type.Object({ id: Type.String({ format: "uuid" }) });
const OrgBankTransfer = Type.Composite([
  BankTransfer,
  Type.Object({ requested_by: Type.String({ description: "the admin's account id" }) }),
]);
const orgView = (t: Parameters<typeof view>[0]) => ({ ...view(t), requested_by: t.account_id });

/**
 * Bank-transfer top-ups of the organization wallet (admins): the billing area's bank-transfer requests with the
 * organization as owner, confirmed by the operator like personal ones (POST /v1/operator/bank-transfers/{id}/confirm).
 */
export function orgBankRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const svc = orgBankService(ctx.db, ctx.config.payments);

  r.get(
    "/v1/org/bank-transfer/config",
    {
      config: {
        auth: read,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role"],
        summaryKo: "조직 지갑 무통장 입금: 입금 계좌, 최소·최대 금액, 저장된 사업자 정보(관리자).",
      },
      schema: {
        operationId: "getOrgBankTransferConfig",
        tags,
        summary:
          "Admin: the deposit account, amount limits and the organization's saved business details; available is false for card and suite organizations.",
        response: {
          200: Type.Object({
            ...BankTransferConfigFields,
            billing_mode: Type.String(),
            available: Type.Boolean({ description: "whether this organization may request top-ups" }),
          }),
        },
      },
    },
    async (request) => {
      const c = await svc.config(callerOf(request), orgOf(request));
      return {
        deposit_account: c.bank.accountNumber
          ? { bank_name: c.bank.bankName, account_number: c.bank.accountNumber, account_holder: c.bank.accountHolder }
          : null,
        min_amount_krw: c.bank.minKrw,
        max_amount_krw: c.bank.maxKrw,
        max_pending: MAX_PENDING,
        business_info: c.business,
        billing_mode: c.billing_mode,
        available: c.available,
      };
    },
  );

  r.get(
    "/v1/org/bank-transfers",
    {
      config: {
        auth: read,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role"],
        summaryKo: "조직 지갑 무통장 입금 충전 요청 목록(관리자).",
      },
      schema: {
        operationId: "listOrgBankTransfers",
        tags,
        summary:
          "Admin: the organization wallet's bank-transfer top-up requests, newest first; ?status=&limit=&cursor=.",
        querystring: ListQuery,
        response: { 200: Type.Object({ items: Type.Array(OrgBankTransfer), next_cursor: Nullable(Type.String()) }) },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = await svc.list(callerOf(request), {
        status: request.query.status,
        limit,
        afterId: request.query.cursor,
      });
      return { items: rows.map(orgView), next_cursor: rows.length === limit ? rows[rows.length - 1].id : null };
    },
  );

  r.post(
    "/v1/org/bank-transfers",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: [
          "not_found",
          "forbidden_role",
          "conflict",
          "bank_transfer_unavailable",
          "amount_out_of_range",
          "tax_invoice_required",
          "invalid_business_number",
          "too_many_pending",
        ],
        summaryKo:
          "조직 지갑 무통장 입금 충전을 요청합니다(관리자, 선불·개인 결제 조직만; 카드·스위트는 409). 운영자 확인 후 충전됩니다.",
      },
      schema: {
        operationId: "createOrgBankTransfer",
        tags,
        summary:
          "Admin: request a bank-transfer top-up of the organization wallet {amount_krw, depositor_name, receipt_type none|tax_invoice, tax_invoice}; prepaid or personal organizations only (409 otherwise); credited after operator confirmation.",
        body: Body({
          amount_krw: Type.Integer({ minimum: 1 }),
          depositor_name: Type.String({ minLength: 1, maxLength: 50 }),
          receipt_type: Type.Union([Type.Literal("none"), Type.Literal("tax_invoice")]),
          tax_invoice: Type.Optional(TaxInvoice),
        }),
        response: { 201: OrgBankTransfer },
      },
    },
    async (request, reply) =>
      reply.code(201).send(orgView(await svc.create(callerOf(request), orgOf(request), request.body))),
  );

  r.post(
    "/v1/org/bank-transfers/:id/cancel",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role", "invalid_state", "deposit_reported"],
        summaryKo: "입금 전(입금 알림 전)에 조직 지갑 충전 요청을 취소합니다(관리자).",
      },
      schema: {
        operationId: "cancelOrgBankTransfer",
        tags,
        summary: "Admin: cancel a pending request before the deposit (not after deposit-reported).",
        params: Params,
        response: { 200: OrgBankTransfer },
      },
    },
    async (request) => orgView(await svc.cancel(callerOf(request), request.params.id)),
  );

  r.post(
    "/v1/org/bank-transfers/:id/deposit-reported",
    {
      config: {
        auth: write,
        orgRole: "admin",
        errors: ["not_found", "forbidden_role", "invalid_state"],
        summaryKo: "조직 지갑 충전 입금을 알립니다(운영자 대조용, 관리자). 입금자명을 바꿀 수 있습니다.",
      },
      schema: {
        operationId: "reportOrgBankDeposit",
        tags,
        summary: "Admin: report the deposit for operator matching; depositor_name may be corrected.",
        params: Params,
        body: Body({ depositor_name: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })) }),
        response: { 200: OrgBankTransfer },
      },
    },
    async (request) =>
      orgView(await svc.reportDeposit(callerOf(request), request.params.id, request.body.depositor_name)),
  );
}
