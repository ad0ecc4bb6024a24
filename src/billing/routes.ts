import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { badRequest } from "../http/errors.js";
import { Nullable, PageQuery, Timestamp } from "../http/schemas.js";
import { SOURCE_TYPES, type SourceType } from "./ledger/ledger.js";
import type { BillingService } from "./service.js";
import { registerRoutes, route, type Route } from "../http/route.js";

const KindUsage = Type.Object({
  kind: Type.String(),
  instance_microkrw: Type.Integer(),
  storage_microkrw: Type.Integer(),
  amount_microkrw: Type.Integer(),
  amount_krw: Type.Integer(),
});
const DAY = "^\\d{4}-\\d{2}-\\d{2}$";
const dayStart = (s: string, field: string) => {
  const d = new Date(`${s}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== s)
    throw badRequest("invalid_request", `${field} is not a valid date (YYYY-MM-DD).`);
  return d;
};
const DAY_MS = 86_400_000;

/** Billing part A (spec: Backups, billing): balance, transactions, daily usage, the monthly summary. */
export async function billingRoutes(app: FastifyInstance, billing: BillingService) {
  const routes: Route[] = [];
  const read = { scope: "billing:read" } as const;
  const tags = ["billing"];

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/balance",
      operationId: "getBillingBalance",
      tags,
      summary: "Balance (KRW won; USD micro-dollars), burn rate per hour of what runs now, suite_billed, overdue.",
      summaryKo: "잔액과 시간당 소비(실행 중인 리소스 기준).",
      auth: read,
      response: {
        200: Type.Object({
          currency: Type.Literal("KRW"),
          balance: Type.Integer(),
          balances: Type.Array(Type.Object({ currency: Type.String(), balance: Type.Integer() })),
          burn_rate_krw_per_hour: Type.Integer({ description: "rounded up to whole won" }),
          burn_rate_microkrw_per_hour: Type.Integer(),
          hours_left: Nullable(
            Type.Integer({ description: "whole hours the KRW balance lasts at the burn rate; null without burn" }),
          ),
          suite_billed: Type.Boolean(),
          billing_policy: Type.String(),
          overdue: Type.Boolean(),
          overdue_since: Nullable(Timestamp),
        }),
      },
      handler: async (request) => billing.balance(request.principal!),
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/transactions",
      operationId: "listBillingTransactions",
      tags,
      summary:
        "Ledger transactions on the caller's wallets, newest first; ?type=topup|usage|refund|transfer|adjustment|invoice&currency=&from=&to=&limit=&cursor=.",
      summaryKo: "거래 내역(커서 페이지, 유형·기간 필터).",
      auth: read,
      query: Type.Composite(
        [
          PageQuery,
          Type.Object({
            type: Type.Optional(Type.Union(SOURCE_TYPES.map((t) => Type.Literal(t)))),
            currency: Type.Optional(Type.Union([Type.Literal("KRW"), Type.Literal("USD")])),
            from: Type.Optional(Type.String({ format: "date-time", description: "created at or after" })),
            to: Type.Optional(Type.String({ format: "date-time", description: "created before" })),
          }),
        ],
        { additionalProperties: false },
      ),
      response: {
        200: Type.Object({
          items: Type.Array(
            Type.Object({
              id: Type.String(),
              type: Type.String(),
              source_id: Type.String(),
              currency: Type.String(),
              amount: Type.Integer({
                description: "net on the caller's wallet: + credit, - debit (KRW won, USD micro-dollars)",
              }),
              balance_after: Nullable(Type.Integer()),
              memo: Nullable(Type.String()),
              created_at: Timestamp,
            }),
          ),
          next_cursor: Nullable(Type.String()),
        }),
      },
      handler: async (request) => {
        const qs = request.query;
        return billing.transactions(request.principal!, qs.limit ?? 50, qs.cursor, {
          type: qs.type as SourceType | undefined,
          currency: qs.currency,
          from: qs.from ? new Date(qs.from) : undefined,
          to: qs.to ? new Date(qs.to) : undefined,
        });
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/billing/usage-daily",
      operationId: "getUsageDaily",
      tags,
      summary:
        "Usage per UTC day and resource kind with totals; ?from=YYYY-MM-DD (default 30 days ago)&to=YYYY-MM-DD (inclusive, default today), at most 366 days.",
      summaryKo: "일별 사용량(리소스 종류별, 합계).",
      auth: read,
      query: Type.Object(
        {
          from: Type.Optional(Type.String({ pattern: DAY })),
          to: Type.Optional(Type.String({ pattern: DAY })),
        },
        { additionalProperties: false },
      ),
      response: {
        200: Type.Object({
          from: Type.String(),
          to: Type.String(),
          currency: Type.Literal("KRW"),
          days: Type.Array(
            Type.Object({
              date: Type.String(),
              kinds: Type.Array(KindUsage),
              total_microkrw: Type.Integer(),
              total_krw: Type.Integer(),
            }),
          ),
          total_microkrw: Type.Integer(),
          total_krw: Type.Integer(),
        }),
      },
      handler: async (request) => {
        const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
        const to = request.query.to ? dayStart(request.query.to, "to") : today;
        const from = request.query.from ? dayStart(request.query.from, "from") : new Date(to.getTime() - 29 * DAY_MS);
        if (from > to) throw badRequest("invalid_request", "from is after to.");
        if (to.getTime() - from.getTime() > 365 * DAY_MS)
          throw badRequest("invalid_request", "At most 366 days per request.");
        const out = await billing.usage(request.principal!, from, new Date(to.getTime() + DAY_MS));
        return { ...out, to: to.toISOString().slice(0, 10) };
      },
    }),
  );

  routes.push(
    route({
      method: "GET",
      url: "/v1/bill/summary",
      operationId: "getBillSummary",
      tags,
      summary:
        "Month to date (UTC) by kind, projected month at the current burn rate, spend caps with this month's consumption.",
      summaryKo: "이번 달 사용량(종류별), 월말 예상액, 지출 한도 대비 사용.",
      auth: read,
      response: {
        200: Type.Object({
          period: Type.String(),
          currency: Type.Literal("KRW"),
          period_start: Timestamp,
          period_end: Timestamp,
          month_to_date: Type.Object({
            kinds: Type.Array(KindUsage),
            total_microkrw: Type.Integer(),
            total_krw: Type.Integer(),
          }),
          projected_month: Type.Object({
            total_microkrw: Type.Integer(),
            total_krw: Type.Integer(),
            burn_rate_microkrw_per_hour: Type.Integer(),
          }),
          balance: Type.Integer(),
          suite_billed: Type.Boolean(),
          overdue: Type.Boolean(),
          spend_caps: Type.Object({
            account: Type.Object({
              cap_krw: Type.Integer(),
              is_default: Type.Boolean(),
              used_krw: Type.Integer(),
              remaining_krw: Type.Integer(),
              reached: Type.Boolean(),
            }),
            app: Type.Object({
              cap_krw: Type.Integer(),
              is_default: Type.Boolean(),
              apps: Type.Array(
                Type.Object({
                  kind: Type.String(),
                  id: Type.String(),
                  name: Nullable(Type.String()),
                  used_krw: Type.Integer(),
                  remaining_krw: Type.Integer(),
                  reached: Type.Boolean(),
                }),
              ),
            }),
          }),
        }),
      },
      handler: async (request) => billing.summary(request.principal!),
    }),
  );
  registerRoutes(app, routes);
}
