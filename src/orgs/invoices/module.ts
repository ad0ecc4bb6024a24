/**
 * Organization card billing (README.md here): the routes, and the two jobs. A sub-area of organizations: it uses
 * src/orgs only through ../public.ts. `orgs.invoices-finalize` runs at 00:10 UTC on the 1st; `orgs.invoices-charge`
 * every 10 minutes catches up any month a missed run left (so a platform down on the 1st still invoices) and
 * charges what is due: new invoices, retries whose back-off ended, and attempts left without an answer.
 */
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { defineArea } from "../../kernel/area.js";
import type { AppContext, Platform } from "../../kernel/context.js";
import type { JobSpec } from "../../kernel/contracts.js";
import { paymentDeps } from "../../billing/public.js";
import { chargeDue, type ChargeDeps } from "./charge.js";
import { finalizeDue } from "./finalize.js";
import { invoiceRoutes } from "./routes.js";
import { invoicesService } from "./service.js";

const chargeDeps = (p: Platform, log: FastifyBaseLogger): ChargeDeps => ({
  db: p.db,
  payments: paymentDeps(p.db, p.config, log, p.secrets),
  log,
});

export const orgInvoiceRoutes = (app: FastifyInstance, ctx: AppContext) =>
  invoiceRoutes(app, invoicesService(chargeDeps(ctx, app.log)));

export function invoiceJobs(p: Platform): JobSpec[] {
  const deps = chargeDeps(p, p.log);
  return [
    {
      name: "orgs.invoices-finalize",
      cron: "10 0 1 * *",
      retryLimit: 3,
      expireInSeconds: 900,
      handler: async () => {
        await finalizeDue(deps);
      },
    },
    {
      name: "orgs.invoices-charge",
      cron: "*/10 * * * *",
      retryLimit: 0,
      expireInSeconds: 900,
      handler: async () => {
        // a month one organization could not finalise does not hold back the charges of the others
        const caughtUp = await finalizeDue(deps).then(
          () => null,
          (err: unknown) => err,
        );
        await chargeDue(deps);
        if (caughtUp) throw caughtUp;
      },
    },
  ];
}

export const orgInvoicesArea = defineArea<null>({
  name: "orgs-invoices",
  routes: (app, ctx) => orgInvoiceRoutes(app, ctx),
  jobs: (p) => invoiceJobs(p),
});
