import type { UsageTotals } from "../contract.js";
import { krw } from "./reports.js";
import { spentByCreators } from "./repo.js";

/**
 * Billing's usage totals for organization budgets (kernel.use("usageTotals")): whole KRW (rounded down) of the metered usage
 * of an owner's resources in [from, to), the instance and storage micro-won of every usage record, optionally only
 * of the resources the given accounts created (a member's or a department's share of company assets).
 */
export const usageTotals = (): UsageTotals => ({
  spentKrw: async (q, owner, range) =>
    krw(await spentByCreators(q, owner, range.from, range.to, range.accountIds ?? null)),
});
