import { defineArea } from "../kernel/area.js";
import { billingRoutes } from "./routes.js";
import { paymentRoutes } from "./payment-routes.js";
import { billingJobs } from "./metering/jobs.js";
import { paymentJobs } from "./payments/jobs.js";

/** Ledger, metering, balance and usage reports, payments and bank transfers. */
export const billingArea = defineArea({
  name: "billing",
  routes: async (app, ctx) => {
    await billingRoutes(app, ctx);
    await paymentRoutes(app, ctx);
  },
  jobs: (p) => [
    ...billingJobs(p.jobs, { db: p.db, overdue: { action: p.config.overdueAction, graceHours: p.config.overdueGraceHours } }),
    ...paymentJobs({ db: p.db, config: p.config }),
  ],
});
