/** What the billing area provides the others (capability "usageTotals", for organization budgets and partners). */
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    usageTotals: UsageTotals;
  }
}

/** Billing's usage totals for an owner (budgets): whole KRW charged for usage in [from, to), optionally by creators. */
export interface UsageTotals {
  spentKrw(q: Queryable, owner: Owner, range: { from: Date; to: Date; accountIds?: string[] }): Promise<number>;
}
