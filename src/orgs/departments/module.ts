import { defineArea } from "../../kernel/area.js";
import { chartRoutes } from "./routes.js";

/**
 * Departments and HR syncs (README.md here): the department tree and the member and department syncs (JSON and
 * CSV). A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgDepartmentsArea = defineArea<null>({
  name: "orgs-departments",
  routes: (app, ctx) => chartRoutes(app, { db: ctx.db, kernel: ctx.kernel, tokens: ctx.tokens }),
});
