import { defineArea } from "../../kernel/area.js";
import { auditRoutes } from "./routes.js";

/**
 * Organization API keys and the organization audit log (README.md here). A sub-area of organizations: it uses
 * src/orgs only through ../public.ts.
 */
export const orgAuditArea = defineArea<null>({
  name: "orgs-audit",
  routes: (app, ctx) => auditRoutes(app, { db: ctx.db, tokens: ctx.tokens }),
});
