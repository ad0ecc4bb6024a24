import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { partnerAccountGuard } from "./guard.js";
import { profileRoutes } from "./routes.js";
import { partnerService } from "./service.js";
import { childRoutes } from "./children/routes.js";
import { childrenService } from "./children/service.js";
import { departmentRoutes } from "./departments/routes.js";
import { departmentsService } from "./departments/service.js";
import { partnerAdmission } from "./admission.js";
import { billingJobs, billingRoutes } from "./billing/index.js";
import { accessSetup, partnerAccessRoutes } from "./access/module.js";
import { PARTNER_ERROR_CODES } from "./errors.js";
import { PARTNER_SCOPES } from "./scopes.js";

/**
 * Partner platforms (issue 26; README.md here): partner accounts the operator makes, their isolated child identities
 * (owner kind partner_child) with least-privilege tokens, credit, monthly limits and a department chart with run
 * limits. Settlement and invoices (billing/) and site locks, visitor sessions and registries (access/) build on it.
 */
export const partnerArea = defineArea<null>({
  name: "partner",
  errors: PARTNER_ERROR_CODES,
  scopes: PARTNER_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [
    {
      name: "partner",
      description: "Partner platforms: child identities and tokens, credit, limits and department quotas.",
    },
  ],
  setup: (p) => {
    accessSetup(p);
    p.kernel.provide("partnerAccount", partnerAccountGuard(p.db));
    return null;
  },
  routes: (_app, ctx) => [
    ...profileRoutes(partnerService({ db: ctx.db, kernel: ctx.kernel })),
    ...childRoutes(childrenService({ db: ctx.db, kernel: ctx.kernel, tokens: ctx.tokens })),
    ...departmentRoutes(departmentsService({ db: ctx.db })),
    ...billingRoutes(ctx),
    ...partnerAccessRoutes(ctx),
  ],
  admissionErrors: [
    "partner_monthly_limit",
    "partner_child_monthly_limit",
    "department_deploy_blocked",
    "quota_exceeded",
  ],
  admission: (p) => partnerAdmission(p.kernel),
  jobs: (p) => billingJobs(p),
});
