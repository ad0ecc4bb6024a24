import { defineArea } from "../kernel/area.js";
import { accountRoutes } from "./routes.js";

/** The account: profile, password, spend caps, API keys, own audit log, deletion. */
export const accountsArea = defineArea({ name: "accounts", routes: accountRoutes });
