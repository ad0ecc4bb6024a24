import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../kernel/context.js";
import { badRequest } from "../http/errors.js";
import { Nullable, PageQuery, Timestamp } from "../http/schemas.js";
import { findLiveAccount } from "../accounts/repo.js";
import { findWalletOf, SOURCE_TYPES, type SourceType } from "./ledger/ledger.js";
import { listOwnerTransactions } from "./ledger/history.js";
import { burnRateMicro, krw, monthToDate, usageDaily } from "./metering/reports.js";
import { MICRO } from "./catalog.js";

const KindUsage = Type.Object({
  kind: Type.String(), instance_microkrw: Type.Integer(), storage_microkrw: Type.Integer(), amount_microkrw: Type.Integer(), amount_krw: Type.Integer(),
});
const DAY = "^\\d{4}-\\d{2}-\\d{2}$";
const dayStart = (s: string, field: string) => {
  const d = new Date(`${s}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== s) throw badRequest("invalid_request", `${field} is not a valid date (YYYY-MM-DD).`);
  return d;
};
const DAY_MS = 86_400_000;

/** Billing part A (spec: Backups, billing): balance, transactions, daily usage, the monthly summary. */
export async function billingRoutes(app: FastifyInstance, ctx: AppContext) {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const read = { scope: "billing:read" } as const;
  const tags = ["billing"];
  const owner = (accountId: string) => ({ kind: "account" as const, id: accountId });

  r.get("/v1/billing/balance", {
    config: { auth: read, summaryKo: "잔액과 시간당 소비(실행 중인 리소스 기준)." },
    schema: {
      operationId: "getBillingBalance", tags, summary: "Balance (KRW won; USD micro-dollars), burn rate per hour of what runs now, suite_billed, overdue.",
      response: {
        200: Type.Object({
          currency: Type.Literal("KRW"), balance: Type.Integer(),
          balances: Type.Array(Type.Object({ currency: Type.String(), balance: Type.Integer() })),
          burn_rate_krw_per_hour: Type.Integer({ description: "rounded up to whole won" }), burn_rate_microkrw_per_hour: Type.Integer(),
          hours_left: Nullable(Type.Integer({ description: "whole hours the KRW balance lasts at the burn rate; null without burn" })),
          suite_billed: Type.Boolean(), billing_policy: Type.String(), overdue: Type.Boolean(), overdue_since: Nullable(Timestamp),
        }),
      },
    },
  }, async (request) => {
    const accountId = request.principal!.accountId;
    const krwWallet = await findWalletOf(ctx.db, owner(accountId), "KRW");
    const usdWallet = await findWalletOf(ctx.db, owner(accountId), "USD");
    const balance = krwWallet?.balance ?? 0;
    const burn = await burnRateMicro(ctx.db, accountId);
    const policy = krwWallet?.policy ?? "prepaid";
    return {
      currency: "KRW" as const, balance,
      balances: [{ currency: "KRW", balance }, ...(usdWallet ? [{ currency: "USD", balance: usdWallet.balance ?? 0 }] : [])],
      burn_rate_krw_per_hour: Math.ceil(burn / MICRO), burn_rate_microkrw_per_hour: burn,
      hours_left: burn > 0 ? Math.max(0, Math.floor((balance * MICRO) / burn)) : null,
      suite_billed: policy === "suite", billing_policy: policy,
      overdue: !!krwWallet?.overdue_since, overdue_since: krwWallet?.overdue_since?.toISOString() ?? null,
    };
  });

  r.get("/v1/billing/transactions", {
    config: { auth: read, summaryKo: "거래 내역(커서 페이지, 유형·기간 필터)." },
    schema: {
      operationId: "listBillingTransactions", tags,
      summary: "Ledger transactions on the caller's wallets, newest first; ?type=topup|usage|refund|transfer|adjustment|invoice&currency=&from=&to=&limit=&cursor=.",
      querystring: Type.Composite([PageQuery, Type.Object({
        type: Type.Optional(Type.Union(SOURCE_TYPES.map((t) => Type.Literal(t)))),
        currency: Type.Optional(Type.Union([Type.Literal("KRW"), Type.Literal("USD")])),
        from: Type.Optional(Type.String({ format: "date-time", description: "created at or after" })),
        to: Type.Optional(Type.String({ format: "date-time", description: "created before" })),
      })], { additionalProperties: false }),
      response: {
        200: Type.Object({
          items: Type.Array(Type.Object({
            id: Type.String(), type: Type.String(), source_id: Type.String(), currency: Type.String(),
            amount: Type.Integer({ description: "net on the caller's wallet: + credit, - debit (KRW won, USD micro-dollars)" }),
            balance_after: Nullable(Type.Integer()), memo: Nullable(Type.String()), created_at: Timestamp,
          })),
          next_cursor: Nullable(Type.String()),
        }),
      },
    },
  }, async (request) => {
    const qs = request.query;
    return listOwnerTransactions(ctx.db, owner(request.principal!.accountId), qs.limit ?? 50, qs.cursor, {
      type: qs.type as SourceType | undefined, currency: qs.currency, from: qs.from ? new Date(qs.from) : undefined, to: qs.to ? new Date(qs.to) : undefined,
    });
  });

  r.get("/v1/billing/usage-daily", {
    config: { auth: read, summaryKo: "일별 사용량(리소스 종류별, 합계)." },
    schema: {
      operationId: "getUsageDaily", tags, summary: "Usage per UTC day and resource kind with totals; ?from=YYYY-MM-DD (default 30 days ago)&to=YYYY-MM-DD (inclusive, default today), at most 366 days.",
      querystring: Type.Object({
        from: Type.Optional(Type.String({ pattern: DAY })), to: Type.Optional(Type.String({ pattern: DAY })),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          from: Type.String(), to: Type.String(), currency: Type.Literal("KRW"),
          days: Type.Array(Type.Object({ date: Type.String(), kinds: Type.Array(KindUsage), total_microkrw: Type.Integer(), total_krw: Type.Integer() })),
          total_microkrw: Type.Integer(), total_krw: Type.Integer(),
        }),
      },
    },
  }, async (request) => {
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
    const to = request.query.to ? dayStart(request.query.to, "to") : today;
    const from = request.query.from ? dayStart(request.query.from, "from") : new Date(to.getTime() - 29 * DAY_MS);
    if (from > to) throw badRequest("invalid_request", "from is after to.");
    if (to.getTime() - from.getTime() > 365 * DAY_MS) throw badRequest("invalid_request", "At most 366 days per request.");
    const out = await usageDaily(ctx.db, request.principal!.accountId, from, new Date(to.getTime() + DAY_MS));
    return { ...out, to: to.toISOString().slice(0, 10) };
  });

  r.get("/v1/bill/summary", {
    config: { auth: read, summaryKo: "이번 달 사용량(종류별), 월말 예상액, 지출 한도 대비 사용." },
    schema: {
      operationId: "getBillSummary", tags, summary: "Month to date (UTC) by kind, projected month at the current burn rate, spend caps with this month's consumption.",
      response: {
        200: Type.Object({
          period: Type.String(), currency: Type.Literal("KRW"), period_start: Timestamp, period_end: Timestamp,
          month_to_date: Type.Object({ kinds: Type.Array(KindUsage), total_microkrw: Type.Integer(), total_krw: Type.Integer() }),
          projected_month: Type.Object({ total_microkrw: Type.Integer(), total_krw: Type.Integer(), burn_rate_microkrw_per_hour: Type.Integer() }),
          balance: Type.Integer(), suite_billed: Type.Boolean(), overdue: Type.Boolean(),
          spend_caps: Type.Object({
            account: Type.Object({ cap_krw: Type.Integer(), is_default: Type.Boolean(), used_krw: Type.Integer(), remaining_krw: Type.Integer(), reached: Type.Boolean() }),
            app: Type.Object({
              cap_krw: Type.Integer(), is_default: Type.Boolean(),
              apps: Type.Array(Type.Object({ kind: Type.String(), id: Type.String(), name: Nullable(Type.String()), used_krw: Type.Integer(), remaining_krw: Type.Integer(), reached: Type.Boolean() })),
            }),
          }),
        }),
      },
    },
  }, async (request) => {
    const accountId = request.principal!.accountId;
    const account = await findLiveAccount(ctx.db, accountId);
    const m = await monthToDate(ctx.db, accountId, new Date());
    const wallet = await findWalletOf(ctx.db, owner(accountId), "KRW");
    const accountCap = account?.account_spend_cap_krw ?? ctx.config.defaultAccountSpendCapKrw;
    const appCap = account?.app_spend_cap_krw ?? ctx.config.defaultAppSpendCapKrw;
    const used = krw(m.mtdMicro);
    return {
      period: m.period, currency: "KRW" as const, period_start: m.start.toISOString(), period_end: m.end.toISOString(),
      month_to_date: { kinds: m.kinds, total_microkrw: m.mtdMicro, total_krw: used },
      projected_month: { total_microkrw: m.projectedMicro, total_krw: krw(m.projectedMicro), burn_rate_microkrw_per_hour: m.burnMicro },
      balance: wallet?.balance ?? 0, suite_billed: wallet?.policy === "suite", overdue: !!wallet?.overdue_since,
      spend_caps: {
        account: { cap_krw: accountCap, is_default: account?.account_spend_cap_krw == null, used_krw: used, remaining_krw: Math.max(0, accountCap - used), reached: used >= accountCap },
        app: {
          cap_krw: appCap, is_default: account?.app_spend_cap_krw == null,
          apps: m.perResource.map((p) => ({ kind: p.kind, id: p.id, name: p.name, used_krw: krw(p.micro), remaining_krw: Math.max(0, appCap - krw(p.micro)), reached: krw(p.micro) >= appCap })),
        },
      },
    };
  });
}
