import { defineArea } from "../kernel/area.js";
import { accountOwner } from "../kernel/owner.js";
import { roleAtLeast } from "./contract.js";
import { assertMayManageAsset } from "./asset-management.js";
import * as repo from "./repo.js";
import { coreRoutes } from "./routes.js";
import { orgsService } from "./service.js";
import { ORGS_ERROR_CODES } from "./errors.js";
import { ORGS_SCOPES } from "./scopes.js";

/**
 * Organizations (issue 13; README.md here), the core: the organization itself and its settings, membership with
 * roles and company assets through the owner model. It provides the capability "orgs" at setup, which the one authorizer
 * (http/authenticate.ts) asks for every route declaring `orgRole`. Its sub-areas (visibility, invitations,
 * departments, rules, budgets, ...: one folder and one module each, listed right after it in src/areas.ts) use it
 * only through public.ts.
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
    p.kernel.provide("orgs", { membership: (q, accountId) => repo.membership(q, accountId), roleAtLeast });
    p.kernel.contribute(
      "ownerPolicies",
      {
        ownerKind: "org",
        payer: async (q, owner, accountId) => {
          if (owner.kind !== "org") return owner;
          // personal billing: each company asset is paid by its responsible member
          return (await repo.billingModeOf(q, owner.id)) === "personal" ? accountOwner(accountId) : owner;
        },
        assertMayManage: assertMayManageAsset,
      },
      "org",
    );
    return null;
  },
  routes: (app, ctx) => {
    coreRoutes(app, orgsService({ db: ctx.db, kernel: ctx.kernel, tokens: ctx.tokens }));
  },
});
