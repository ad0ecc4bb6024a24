import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../kernel/context.js";
import { callerOf } from "../../auth/principal.js";
import { Nullable } from "../../http/schemas.js";
import {
  BankTransfer,
  BankTransferConfigFields,
  BankTransferListQuery as ListQuery,
  BankTransferRequest,
  BANK_TRANSFER_REQUEST_ERRORS,
  bankTransferConfigView,
  bankTransferPage,
  bankTransferView as view,
  DepositReport,
} from "../../billing/public.js";
import { orgOf, read, tags, write } from "../public.js";
import { orgBankService } from "./service.js";
import { registerRoutes, route, type Route } from "../../http/route.js";

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
  const routes: Route[] = [];
  const svc = orgBankService(ctx.db, ctx.config.payments);

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/bank-transfer/config",
      operationId: "getOrgBankTransferConfig",
      tags,
      summary:
        "Admin: the deposit account, amount limits and the organization's saved business details; available is false for card and suite organizations.",
      summaryKo: "조직 지갑 무통장 입금: 입금 계좌, 최소·최대 금액, 저장된 사업자 정보(관리자).",
      auth: read,
      orgRole: "admin",
      response: {
        200: Type.Object({
          ...BankTransferConfigFields,
          billing_mode: Type.String(),
          available: Type.Boolean({ description: "whether this organization may request top-ups" }),
        }),
      },
      handler: async (request) => {
        const c = await svc.config(callerOf(request), orgOf(request));
        return { ...bankTransferConfigView(c.bank, c.business), billing_mode: c.billing_mode, available: c.available };
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/org/bank-transfers",
      operationId: "listOrgBankTransfers",
      tags,
      summary: "Admin: the organization wallet's bank-transfer top-up requests, newest first; ?status=&limit=&cursor=.",
      summaryKo: "조직 지갑 무통장 입금 충전 요청 목록(관리자).",
      auth: read,
      orgRole: "admin",
      query: ListQuery,
      response: { 200: Type.Object({ items: Type.Array(OrgBankTransfer), next_cursor: Nullable(Type.String()) }) },
      handler: async (request) => bankTransferPage(request.query, (q) => svc.list(callerOf(request), q), orgView),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/bank-transfers",
      operationId: "createOrgBankTransfer",
      tags,
      summary:
        "Admin: request a bank-transfer top-up of the organization wallet {amount_krw, depositor_name, receipt_type none|tax_invoice, tax_invoice}; prepaid or personal organizations only (409 otherwise); credited after operator confirmation.",
      summaryKo:
        "조직 지갑 무통장 입금 충전을 요청합니다(관리자, 선불·개인 결제 조직만; 카드·스위트는 409). 운영자 확인 후 충전됩니다.",
      auth: write,
      orgRole: "admin",
      errors: ["conflict", ...BANK_TRANSFER_REQUEST_ERRORS],
      body: BankTransferRequest,
      response: { 201: OrgBankTransfer },
      handler: async (request, reply) =>
        reply.code(201).send(orgView(await svc.create(callerOf(request), orgOf(request), request.body))),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/bank-transfers/:id/cancel",
      operationId: "cancelOrgBankTransfer",
      tags,
      summary: "Admin: cancel a pending request before the deposit (not after deposit-reported).",
      summaryKo: "입금 전(입금 알림 전)에 조직 지갑 충전 요청을 취소합니다(관리자).",
      auth: write,
      orgRole: "admin",
      errors: ["invalid_state", "deposit_reported"],
      params: Params,
      response: { 200: OrgBankTransfer },
      handler: async (request) => orgView(await svc.cancel(callerOf(request), request.params.id)),
    }),
  );

  routes.push(
    route({
      method: "POST",
      url: "/v1/org/bank-transfers/:id/deposit-reported",
      operationId: "reportOrgBankDeposit",
      tags,
      summary: "Admin: report the deposit for operator matching; depositor_name may be corrected.",
      summaryKo: "조직 지갑 충전 입금을 알립니다(운영자 대조용, 관리자). 입금자명을 바꿀 수 있습니다.",
      auth: write,
      orgRole: "admin",
      errors: ["invalid_state"],
      params: Params,
      body: DepositReport,
      response: { 200: OrgBankTransfer },
      handler: async (request) =>
        orgView(await svc.reportDeposit(callerOf(request), request.params.id, request.body.depositor_name)),
    }),
  );
  registerRoutes(app, routes);
}
