import { defineArea } from "../../kernel/area.js";
import { rulesAdmission } from "./admission.js";
import { deployRulesRoutes } from "./routes.js";
import { rulesService } from "./service.js";

/**
 * Deploy rules and department deploy blocks (README.md here): the routes and the admission check every kernel.admit
 * runs (403 deploy_rule_violation). Listed before budgets (../budgets/module.ts), so a refused deployment is refused
 * by its rules before a budget is counted. A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgRulesArea = defineArea<null>({
  name: "orgs-rules",
  routes: (app, ctx) => deployRulesRoutes(app, rulesService(ctx.db)),
  admissionErrors: ["deploy_rule_violation"],
  admission: () => rulesAdmission(),
});
