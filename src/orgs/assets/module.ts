import { defineArea } from "../../kernel/area.js";
import { assetRoutes } from "./routes.js";
import { assetsService } from "./service.js";

/**
 * Company assets (README.md here): every area's resources the organization owns, in one list, and their moves
 * between the organization, members and creators. A sub-area of organizations: it uses src/orgs only through
 * ../public.ts.
 */
export const orgAssetsArea = defineArea<null>({
  name: "orgs-assets",
  routes: (app, ctx) => assetRoutes(app, assetsService({ db: ctx.db, kernel: ctx.kernel })),
});
