/** What the billing area provides the others (capability "usageTotals", for organization budgets and partners). */
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import type { RouteGuard } from "../http/route-guard.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    usageTotals: UsageTotals;
    /** in the company context the organization's wallet is for its admins and owner (org-context.ts) */
    orgWalletAdmins: RouteGuard;
  }
}

/** Billing's usage totals for an owner (budgets): whole KRW charged for usage in [from, to), optionally by creators. */
export interface UsageTotals {
  spentKrw(q: Queryable, owner: Owner, range: { from: Date; to: Date; accountIds?: string[] }): Promise<number>;
}
