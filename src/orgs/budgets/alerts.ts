import type { FastifyBaseLogger } from "fastify";
import { inTransaction } from "../../store/db.js";
import { recordEvent } from "../../events/public.js";
import type { Db } from "../../store/db.js";
import type { JobSpec } from "../../kernel/contracts.js";
import type { Kernel } from "../../kernel/kernel.js";
import { budgetName, consumedKrw, monthRange } from "./consumption.js";
import * as repo from "./repo.js";

export const BUDGET_ALERTS_JOB = "orgs.budget-alerts";
export const THRESHOLDS = [80, 100] as const;

export interface AlertDeps {
  db: Db;
  kernel: Pick<Kernel, "use" | "mailer">;
  log: FastifyBaseLogger;
}

function message(b: repo.BudgetRow, org: string, threshold: number, used: number, month: string, to: string) {
  const percent = Math.floor((used * 100) / b.amount_krw);
  const what = budgetName(b).replace(/^The /, "the ");
  return {
    to,
    subject: `[${org}] ${percent}% of ${what} used (${month})`,
    text: [
      `${budgetName(b)} of ${org} has reached ${threshold}%: ${used} of ${b.amount_krw} KRW used in ${month} (UTC).`,
      "The budget is in warn mode: nothing is stopped. Set mode block to stop paid creation when it is used up,",
      "or raise it with PUT /v1/org/budgets.",
    ].join("\n"),
  };
}

/**
 * One pass over the warn budgets of every organization: a budget whose consumption this month crossed 80% or 100%
 * mails the organization's owner and admins once per threshold and month. The thresholds are claimed first
 * (org_budget_alerts' primary key: one process wins, a second run finds them taken) and the mail sent after that
 * insert committed; a failed send gives its claims back so the next run retries. A crash between the claim and the
 * send loses that one mail rather than risking two. Crossing both at once sends the 100% mail only.
 */
export async function sendBudgetAlerts(deps: AlertDeps, now: Date = new Date()): Promise<number> {
  const range = monthRange(now);
  let sent = 0;
  for (const b of await repo.warnBudgetsPending(deps.db, range.from)) {
    const used = await consumedKrw(deps.db, deps.kernel.use("usageTotals"), b, range);
    const crossed = THRESHOLDS.filter((t) => used * 100 >= b.amount_krw * t);
    if (!crossed.length) continue;
    const claimed = await inTransaction(deps.db, async (tx) => {
      const got = await repo.claimAlerts(tx, b.id, range.from, [...crossed]);
      if (got.length)
        await recordEvent(tx, {
          type: Math.max(...got) >= 100 ? "budget.exceeded" : "budget.warn",
          owner: { kind: "org", id: b.org_id },
          resource: { kind: "budget", id: b.id },
          data: { threshold_percent: Math.max(...got), used_krw: used, amount_krw: b.amount_krw, month: range.label },
        });
      return got;
    });
    if (!claimed.length) continue;
    const [org, admins] = [await repo.orgName(deps.db, b.org_id), await repo.adminEmails(deps.db, b.org_id)];
    if (!org || !admins.length) continue;
    try {
      await deps.kernel.mailer.send(message(b, org, Math.max(...claimed), used, range.label, admins.join(", ")));
      sent++;
    } catch (err) {
      deps.log.warn({ err, budget: b.id }, "budget alert not sent; retried on the next run");
      await repo.releaseAlerts(deps.db, b.id, range.from, claimed);
    }
  }
  return sent;
}

/** Every 5 minutes (the warn mails follow consumption, which billing meters every minute). */
export const budgetAlertsJob = (deps: AlertDeps): JobSpec => ({
  name: BUDGET_ALERTS_JOB,
  cron: "*/5 * * * *",
  retryLimit: 1,
  expireInSeconds: 600,
  handler: async () => {
    await sendBudgetAlerts(deps);
  },
});
