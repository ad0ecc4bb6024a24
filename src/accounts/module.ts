import { defineArea } from "../kernel/area.js";
import { accountsService } from "./service.js";
import { signInRoutes } from "./sign-in-routes.js";
import { meRoutes } from "./routes.js";
import { apiKeyRoutes } from "./api-key-routes.js";
import { ACCOUNTS_ERROR_CODES } from "./errors.js";

/** The account: sign-up, sign-in and tokens; profile, password, spend caps, API keys, own audit log, deletion. */
export const accountsArea = defineArea({
  name: "accounts",
  errors: ACCOUNTS_ERROR_CODES,
  // "auth" first: the sign-in routes were an area of their own listed before accounts, so the tags, the manual and
  // the OpenAPI document keep their order.
  tags: [
    { name: "auth", description: "Sign-up, sign-in and sign-out; the caller's token." },
    {
      name: "account",
      description:
        "The signed-in account: profile, password, spend caps, API keys, own audit log, deletion. Full-access tokens only.",
    },
  ],
  routes: async (app, ctx) => {
    const accounts = accountsService(ctx.db, ctx.config, ctx.tokens);
    await signInRoutes(app, accounts);
    await meRoutes(app, ctx, accounts);
    await apiKeyRoutes(app, accounts);
  },
});
