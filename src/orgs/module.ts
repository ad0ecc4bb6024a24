import { defineArea } from "../kernel/area.js";
import { accountOwner } from "../kernel/owner.js";
import { assertMayManageAsset } from "./asset-management.js";
import { inviteRoutes } from "./invites/routes.js";
import * as repo from "./repo.js";
import { coreRoutes } from "./routes.js";
import { chartRoutes } from "./departments/routes.js";
import { auditRoutes } from "./audit/routes.js";
import { orgsService } from "./service.js";
import { visibilityRoutes } from "./visibility/routes.js";
import { siteAccessPolicy } from "./visibility/sites.js";
import { assetRoutes } from "./assets/routes.js";
import { assetsService } from "./assets/service.js";
import { guardrailAdmission, guardrailJobs, guardrailRoutes } from "./rules/index.js";
import { refreshJob, refreshObserver, refreshRoutes } from "./refresh/index.js";
import { gitlabIntegrationRoutes, gitlabJobs } from "./gitlab/index.js";
import { invoiceJobs, orgInvoiceRoutes } from "./invoices/index.js";
import { orgBankRoutes } from "./bank/routes.js";
import { orgStatsRoutes } from "./stats/routes.js";
import { orgStatsService } from "./stats/service.js";
import { orgHostsRoutes, orgHostsSetup, orgHostsStart, orgHostsStop } from "./hosts/index.js";
import { ORGS_ERROR_CODES } from "./errors.js";
import { ORGS_SCOPES } from "./scopes.js";

/**
 * Organizations (issue 13; README.md here): members with roles, departments, invitations, company assets through
 * the owner model, site visibility at the edge, budgets, deploy rules and the organization audit log. Listed before
 * the areas whose creation paths its admission checks guard; it sets kernel.orgs at setup.
 */
export const orgsArea = defineArea<null>({
  name: "orgs",
  errors: ORGS_ERROR_CODES,
  scopes: ORGS_SCOPES,
  tags: [
    {
      name: "org",
      description:
        "Organizations: members, departments, invitations, company assets, visibility, budgets, rules, audit.",
    },
  ],
  setup: (p) => {
    p.kernel.setOrgs({
      membership: (q, accountId) => repo.membership(q, accountId),
      payer: async (q, owner, accountId) => {
        if (owner.kind !== "org") return owner;
        // personal billing: each company asset is paid by its responsible member
        return (await repo.billingModeOf(q, owner.id)) === "personal" ? accountOwner(accountId) : owner;
      },
      assertMayManage: assertMayManageAsset,
    });
    p.kernel.addEdgeAccess(siteAccessPolicy());
    orgHostsSetup(p);
    p.kernel.addBuildObserver(refreshObserver({ db: p.db, kernel: p.kernel, log: p.log })); // base-image refresh
    return null;
  },
  routes: (app, ctx) => {
    const svc = orgsService({ db: ctx.db, kernel: ctx.kernel, tokens: ctx.tokens });
    coreRoutes(app, svc);
    visibilityRoutes(app, { db: ctx.db, kernel: ctx.kernel, log: ctx.log });
    inviteRoutes(app, ctx);
    assetRoutes(app, assetsService({ db: ctx.db, kernel: ctx.kernel }));
    chartRoutes(app, { db: ctx.db, kernel: ctx.kernel, tokens: ctx.tokens });
    guardrailRoutes(app, { db: ctx.db, kernel: ctx.kernel });
    auditRoutes(app, { db: ctx.db, tokens: ctx.tokens });
    refreshRoutes(app, { db: ctx.db, kernel: ctx.kernel, log: ctx.log });
    gitlabIntegrationRoutes(app, ctx);
    orgInvoiceRoutes(app, ctx);
    orgBankRoutes(app, ctx);
    orgStatsRoutes(app, orgStatsService({ db: ctx.db, kernel: ctx.kernel }));
    orgHostsRoutes(app, ctx);
  },
  admissionErrors: ["budget_exceeded", "deploy_rule_violation"],
  admission: (p) => guardrailAdmission(p.kernel),
  jobs: (p) => [...guardrailJobs(p), refreshJob(p), ...gitlabJobs(p), ...invoiceJobs(p)],
  start: (p) => orgHostsStart(p),
  stop: (p) => orgHostsStop(p),
});
