import { defineArea } from "../../kernel/area.js";
import type { Platform } from "../../kernel/context.js";
import type { JobSpec } from "../../kernel/contracts.js";
import { suiteOf } from "../state.js";
import { suiteAdmission } from "./admission.js";
import { reportUsage } from "./reports.js";
import { suiteBillingRoutes } from "./routes.js";
import { STOP_JOB, suiteBillingService } from "./service.js";
import { enforceAll, enforceOrg } from "./stop.js";
import * as repo from "./repo.js";

export const REPORT_JOB = "suite.billing-report";

/** The periodic jobs: usage reports every 10 minutes (finished hours, then retries), stop-on-exhausted every 5. */
export function suiteBillingJobs(p: Platform): JobSpec<{ orgId?: string }>[] {
  const provider = () => suiteOf(p).provider;
  return [
    {
      name: REPORT_JOB,
      cron: "*/10 * * * *",
      retryLimit: 0,
      expireInSeconds: 900,
      policy: "stately",
      handler: async () => {
        const suite = provider();
        if (!suite) return;
        await reportUsage({ db: p.db, billing: suite.billing, category: suiteOf(p).config.billingCategory });
      },
    },
    {
      name: STOP_JOB,
      cron: "*/5 * * * *",
      retryLimit: 0,
      expireInSeconds: 600,
      handler: async (data) => {
        const suite = provider();
        if (!suite) return;
        const link = data?.orgId ? await repo.linkOf(p.db, data.orgId) : null;
        if (link) await enforceOrg(p, suite.billing, link);
        else await enforceAll(p, suite.billing);
      },
    },
  ];
}

/**
 * The suite's billing part (src/suite/README.md, "Billing"): usage of company assets reported per member and hour
 * to the member's suite account (reports.ts), the two 402s at admission (admission.ts), stop-on-exhausted (stop.ts)
 * and PUT/GET /v1/org/suite/billing.
 */
export const suiteBillingArea = defineArea<null>({
  name: "suite-billing",
  routes: (_app, ctx) => suiteBillingRoutes(suiteBillingService(ctx)),
  jobs: (p) => suiteBillingJobs(p),
  admission: (p) => suiteAdmission(p),
  admissionErrors: ["suite_login_required", "suite_usage_exhausted", "suite_unavailable", "suite_not_configured"],
});
