/** This month's usage of partner children, read through billing's usage totals (kernel.use("usageTotals")), never its tables. */
import type { Queryable } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";

/** [first instant of this UTC month, first instant of the next) */
export function currentMonth(now = new Date()): { from: Date; to: Date } {
  return {
    from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/** Whole KRW the children's resources were charged this month (0 without a billing area). */
export async function monthUsageKrw(q: Queryable, kernel: Pick<Kernel, "use">, childIds: string[]): Promise<number> {
  const usage = kernel.use("usageTotals");
  if (!usage) return 0;
  const range = currentMonth();
  let total = 0;
  for (const id of childIds) total += await usage.spentKrw(q, { kind: "partner_child", id }, range);
  return total;
}
