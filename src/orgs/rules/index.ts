/**
 * Deploy rules and budgets, as the orgs module wires them (README, "Deploy rules and budgets"): the routes, the
 * admission check every kernel.admit runs and the warn-mail job.
 */
import type { FastifyInstance } from "fastify";
import type { Db } from "../../store/db.js";
import type { AdmissionCheck } from "../../kernel/contracts.js";
import type { Platform } from "../../kernel/context.js";
import type { Kernel } from "../../kernel/kernel.js";
import { budgetAdmission } from "../budgets/admission.js";
import { budgetAlertsJob } from "../budgets/alerts.js";
import { budgetRoutes } from "../budgets/routes.js";
import { budgetsService } from "../budgets/service.js";
import { rulesAdmission } from "./admission.js";
import { deployRulesRoutes } from "./routes.js";
import { rulesService } from "./service.js";

export function guardrailRoutes(app: FastifyInstance, deps: { db: Db; kernel: Kernel }): void {
  deployRulesRoutes(app, rulesService(deps.db));
  budgetRoutes(app, budgetsService(deps));
}

/** Deploy blocks and rules first (403 deploy_rule_violation), then block budgets (402 budget_exceeded). */
export function guardrailAdmission(kernel: Pick<Kernel, "use">): AdmissionCheck {
  const rules = rulesAdmission();
  const budgets = budgetAdmission(kernel);
  return async (q, r) => {
    await rules(q, r);
    await budgets(q, r);
  };
}

export const guardrailJobs = (p: Platform) => [budgetAlertsJob({ db: p.db, kernel: p.kernel, log: p.log })];
