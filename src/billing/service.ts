import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";
import type { Principal } from "../auth/principal.js";
import { signsInWithSuite, spendCapsOf } from "../accounts/public.js";
import { findWalletOf } from "./ledger/ledger.js";
import { listOwnerTransactions, type HistoryFilter } from "./ledger/history-repo.js";
import { burnRateMicro, krw, monthToDate, usageDaily } from "./metering/reports.js";
import { MICRO } from "./catalog.js";
import { walletOwnerOf } from "./owner.js";

export interface BillingDeps {
  db: Db;
  kernel: Pick<Kernel, "metering" | "use">;
  /** platform defaults when the account set no spend cap */
  defaultAccountSpendCapKrw: number;
  defaultAppSpendCapKrw: number;
}

/** Billing reads of the caller's owner: balance, transactions, daily usage, the monthly summary. */
export function billingService(deps: BillingDeps) {
  const { db, kernel } = deps;
  const wallet = (p: Principal, currency: "KRW" | "USD") => findWalletOf(db, walletOwnerOf(p.owner), currency);

  /**
   * Whether the caller's usage is billed through the suite: the owner's wallet is a suite wallet, or (in the personal
   * context) the caller is a suite member whose organization's wallet is; their company assets are all they run.
   */
  async function suiteBilled(p: Principal, policy: string): Promise<boolean> {
    if (policy === "suite") return true;
    if (p.owner.kind !== "account" || !(await signsInWithSuite(db, p.accountId))) return false;
    const m = await kernel.use("orgs")?.membership(db, p.accountId);
    return !!m && (await findWalletOf(db, { kind: "org", id: m.orgId }, "KRW"))?.policy === "suite";
  }

  async function balance(p: Principal) {
    const krwWallet = await wallet(p, "KRW");
    const usdWallet = await wallet(p, "USD");
    const balance = krwWallet?.balance ?? 0;
    const burn = await burnRateMicro(db, kernel.metering, p.owner);
    const policy = krwWallet?.policy ?? "prepaid";
    return {
      currency: "KRW" as const,
      balance,
      balances: [
        { currency: "KRW", balance },
        ...(usdWallet ? [{ currency: "USD", balance: usdWallet.balance ?? 0 }] : []),
      ],
      burn_rate_krw_per_hour: Math.ceil(burn / MICRO),
      burn_rate_microkrw_per_hour: burn,
      hours_left: burn > 0 ? Math.max(0, Math.floor((balance * MICRO) / burn)) : null,
      suite_billed: await suiteBilled(p, policy),
      billing_policy: policy,
      overdue: !!krwWallet?.overdue_since,
      overdue_since: krwWallet?.overdue_since?.toISOString() ?? null,
    };
  }

  const transactions = (p: Principal, limit: number, cursor: string | undefined, filter: HistoryFilter) =>
    listOwnerTransactions(db, walletOwnerOf(p.owner), limit, cursor, filter);

  const usage = (p: Principal, from: Date, to: Date) => usageDaily(db, p.owner, from, to);

  async function summary(p: Principal, now = new Date()) {
    const m = await monthToDate(db, kernel.metering, p.owner, now);
    const w = await wallet(p, "KRW");
    // spend caps are the acting account's settings, read now (a change answers the next read)
    const caps = await spendCapsOf(db, deps, p.accountId);
    const accountCap = caps?.account_spend_cap_krw ?? deps.defaultAccountSpendCapKrw;
    const appCap = caps?.app_spend_cap_krw ?? deps.defaultAppSpendCapKrw;
    const used = krw(m.mtdMicro);
    return {
      period: m.period,
      currency: "KRW" as const,
      period_start: m.start.toISOString(),
      period_end: m.end.toISOString(),
      month_to_date: { kinds: m.kinds, total_microkrw: m.mtdMicro, total_krw: used },
      projected_month: {
        total_microkrw: m.projectedMicro,
        total_krw: krw(m.projectedMicro),
        burn_rate_microkrw_per_hour: m.burnMicro,
      },
      balance: w?.balance ?? 0,
      suite_billed: await suiteBilled(p, w?.policy ?? "prepaid"),
      overdue: !!w?.overdue_since,
      spend_caps: {
        account: {
          cap_krw: accountCap,
          is_default: caps?.account_spend_cap_is_default ?? true,
          used_krw: used,
          remaining_krw: Math.max(0, accountCap - used),
          reached: used >= accountCap,
        },
        app: {
          cap_krw: appCap,
          is_default: caps?.app_spend_cap_is_default ?? true,
          apps: m.perResource.map((r) => ({
            kind: r.kind,
            id: r.id,
            name: r.name,
            used_krw: krw(r.micro),
            remaining_krw: Math.max(0, appCap - krw(r.micro)),
            reached: krw(r.micro) >= appCap,
          })),
        },
      },
    };
  }

  return { balance, transactions, usage, summary };
}

export type BillingService = ReturnType<typeof billingService>;
