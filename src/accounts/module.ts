import { defineArea } from "../kernel/area.js";
import { accountsService } from "./service.js";
import { meRoutes } from "./routes.js";
import { apiKeyRoutes } from "./api-key-routes.js";
import { ACCOUNTS_ERROR_CODES } from "./errors.js";

/** The account: profile, password, spend caps, API keys, own audit log, deletion. */
export const accountsArea = defineArea({
  name: "accounts",
  errors: ACCOUNTS_ERROR_CODES,
  tags: [
    {
      name: "account",
      description:
        "The signed-in account: profile, password, spend caps, API keys, own audit log, deletion. Full-access tokens only.",
    },
  ],
  routes: async (app, ctx) => {
    const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
    await meRoutes(app, ctx, accounts);
    await apiKeyRoutes(app, accounts);
  },
});
