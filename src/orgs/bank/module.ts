import { defineArea } from "../../kernel/area.js";
import { orgBankRoutes } from "./routes.js";

/**
 * Bank-transfer top-ups of the organization's wallet (README.md here), through billing's bank transfers. A
 * sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgBankArea = defineArea<null>({
  name: "orgs-bank",
  routes: (app, ctx) => orgBankRoutes(app, ctx),
});
