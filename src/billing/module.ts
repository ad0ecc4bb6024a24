import { defineArea } from "../kernel/area.js";
import { billingRoutes } from "./routes.js";
import { paymentRoutes } from "./payment-routes.js";
import { billingService } from "./service.js";
import { billingJobs } from "./metering/jobs.js";
import { fundsCheck } from "./metering/admission.js";
import { spendCapCheck } from "./metering/spend-caps.js";
import { paymentJobs } from "./payments/jobs.js";
import { usageTotals } from "./metering/usage-totals.js";
import { orgWalletAdminsGuard } from "./org-context.js";
import { BILLING_ERROR_CODES } from "./errors.js";
import { BILLING_SCOPES } from "./scopes.js";

/**
 * Ledger, metering, balance and usage reports, payments and bank transfers. Billing meters every area's
 * metering source, pauses overdue owners through the kernel's lifecycles and refuses paid creation
 * without funds through its admission check; it reads no other area's tables.
 */
export const billingArea = defineArea({
  name: "billing",
  errors: BILLING_ERROR_CODES,
  scopes: BILLING_SCOPES,
  tags: [
    {
      name: "billing",
      description: "Balance, usage, transactions, top-ups, saved cards, auto-recharge and bank transfers.",
    },
  ],
  // organization budgets read consumption through the kernel (kernel.use("usageTotals")), never usage_records
  setup: (p) => {
    p.kernel.provide("usageTotals", usageTotals());
    p.kernel.provide("orgWalletAdmins", orgWalletAdminsGuard(p.kernel, p.db));
    return null;
  },
  routes: async (app, ctx) => {
    await billingRoutes(
      app,
      billingService({
        db: ctx.db,
        kernel: ctx.kernel,
        defaultAccountSpendCapKrw: ctx.config.defaultAccountSpendCapKrw,
        defaultAppSpendCapKrw: ctx.config.defaultAppSpendCapKrw,
      }),
    );
    await paymentRoutes(app, ctx);
  },
  jobs: (p) => [
    ...billingJobs({
      db: p.db,
      kernel: p.kernel,
      overdue: { action: p.config.overdueAction, graceHours: p.config.overdueGraceHours },
    }),
    ...paymentJobs({ db: p.db, config: p.config, secrets: p.secrets }),
  ],
  admissionErrors: ["insufficient_funds", "spend_cap_reached"],
  admission: (p) => {
    const funds = fundsCheck((q, owner, accountId) => p.kernel.payer(q, owner, accountId));
    const caps = spendCapCheck(p.config);
    return async (q, r) => {
      await funds(q, r);
      await caps(q, r);
    };
  },
});
