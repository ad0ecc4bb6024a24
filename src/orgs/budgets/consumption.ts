import type { Queryable } from "../../store/db.js";
import type { UsageTotals } from "../../billing/contract.js";
import { membersUnder } from "../public.js";
import type { BudgetRow } from "./repo.js";

/** The UTC calendar month of `now`: [from, to) and its first day (org_budget_alerts.month). */
export function monthRange(now: Date): { from: Date; to: Date; label: string } {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { from, to, label: from.toISOString().slice(0, 7) };
}

/**
 * This month's consumption of a budget in whole KRW, from billing's usage totals (0 without billing): the company
 * assets' usage; for a department, of those created by its members and the members of its sub-departments; for a
 * member, of those they created. Usage of members who left counts only in the company total.
 */
export async function consumedKrw(
  q: Queryable,
  usage: UsageTotals | null,
  b: Pick<BudgetRow, "org_id" | "scope" | "department_id" | "account_id">,
  range: { from: Date; to: Date },
): Promise<number> {
  if (!usage) return 0;
  const accountIds =
    b.scope === "company"
      ? undefined
      : b.scope === "member"
        ? [b.account_id!]
        : await membersUnder(q, b.department_id!);
  return usage.spentKrw(q, { kind: "org", id: b.org_id }, { from: range.from, to: range.to, accountIds });
}

/** "the company budget", "the department budget of ENG", "the member budget of a@b.c" */
export function budgetName(b: Pick<BudgetRow, "scope" | "department_code" | "email">): string {
  if (b.scope === "company") return "The company budget";
  if (b.scope === "department") return `The department budget of ${b.department_code}`;
  return `The member budget of ${b.email}`;
}
