import type { AdmissionCheck } from "../../kernel/contracts.js";
import type { Kernel } from "../../kernel/kernel.js";
import { ApiError } from "../../http/errors.js";
import { isPaid, prices, type PriceCatalog } from "../../billing/public.js";
import * as orgs from "../public.js";
import { departmentChain } from "../public.js";
import { budgetName, consumedKrw, monthRange } from "./consumption.js";
import * as repo from "./repo.js";

/**
 * Block budgets at admission: in the company context, a paid creation (catalog price above 0; resizes and growth
 * included, updates at the same size not) is refused with 402 budget_exceeded while any block budget that applies
 * to the acting member (the company's, their department's and its ancestors', their own) is used up this month.
 * Free creations and running resources are never stopped here.
 */
export function budgetAdmission(
  kernel: Pick<Kernel, "use">,
  now: () => Date = () => new Date(),
  catalog: () => PriceCatalog = prices,
): AdmissionCheck {
  return async (q, r) => {
    if (r.owner.kind !== "org" || r.update || !kernel.use("usageTotals")) return;
    if (!isPaid(catalog(), r.kind, r.size, r.storageGb ?? 1)) return;
    const m = await orgs.membership(q, r.accountId);
    const departments = m?.orgId === r.owner.id && m.departmentId ? await departmentChain(q, m.departmentId) : [];
    const budgets = await repo.applicableBudgets(
      q,
      r.owner.id,
      r.accountId,
      departments.map((d) => d.id),
      "block",
    );
    const range = monthRange(now());
    for (const b of budgets) {
      const used = await consumedKrw(q, kernel.use("usageTotals"), b, range);
      if (used >= b.amount_krw)
        throw new ApiError(
          "budget_exceeded",
          `${budgetName(b)} (${b.amount_krw} KRW a month, mode block) is used up: ${used} KRW in ${range.label}. Paid creation stops until next month or a larger budget; running resources continue.`,
        );
    }
  };
}
