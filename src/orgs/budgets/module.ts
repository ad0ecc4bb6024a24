import { defineArea } from "../../kernel/area.js";
import { budgetAdmission } from "./admission.js";
import { budgetAlertsJob } from "./alerts.js";
import { budgetRoutes } from "./routes.js";
import { budgetsService } from "./service.js";

/**
 * Budgets (README.md here): the routes, the admission check of block budgets (402 budget_exceeded, after the deploy
 * rules of ../rules/module.ts) and the warn-mail job. A sub-area of organizations: it uses src/orgs only through
 * ../public.ts.
 */
export const orgBudgetsArea = defineArea<null>({
  name: "orgs-budgets",
  routes: (app, ctx) => budgetRoutes(app, budgetsService({ db: ctx.db, kernel: ctx.kernel })),
  admissionErrors: ["budget_exceeded"],
  admission: (p) => budgetAdmission(p.kernel),
  jobs: (p) => [budgetAlertsJob({ db: p.db, kernel: p.kernel, log: p.log })],
});
