import { defineArea } from "../../kernel/area.js";
import { visibilityRoutes } from "./routes.js";
import { siteAccessPolicy } from "./sites.js";

/**
 * Site visibility (README.md here): who may open a company site at the edge, site grants, approvals for wider
 * visibility and department deploy controls. A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgVisibilityArea = defineArea<null>({
  name: "orgs-visibility",
  setup: (p) => {
    const access = siteAccessPolicy();
    p.kernel.contribute("edgeAccess", access, access.ownerKind);
    return null;
  },
  routes: (app, ctx) => visibilityRoutes(app, { db: ctx.db, kernel: ctx.kernel, log: ctx.log }),
});
