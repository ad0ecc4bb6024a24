import { defineArea } from "../../kernel/area.js";
import { orgStatsRoutes } from "./routes.js";
import { orgStatsService } from "./service.js";

/**
 * Site statistics of the organization's company sites and apps (README.md here), from the edge's daily figures.
 * A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgStatsArea = defineArea<null>({
  name: "orgs-stats",
  routes: (app, ctx) => orgStatsRoutes(app, orgStatsService({ db: ctx.db, kernel: ctx.kernel })),
});
