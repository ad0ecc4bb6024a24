import type { FastifyInstance } from "fastify";
import type { AppContext } from "./app.js";
import { authRoutes } from "./auth/routes.js";
import { accountRoutes } from "./accounts/routes.js";
import { metaRoutes } from "./meta/routes.js";
import { operatorRoutes } from "./operator/routes.js";
import { cliRoutes } from "./cli/routes.js";
import { databaseRoutes } from "./databases/routes.js";
import { paymentRoutes } from "./billing/payment-routes.js";
import { billingRoutes } from "./billing/routes.js";

/** Every resource area, registered in one list. */
export const AREAS = [metaRoutes, authRoutes, accountRoutes, cliRoutes, operatorRoutes, databaseRoutes, billingRoutes, paymentRoutes];

export async function registerAreas(app: FastifyInstance, ctx: AppContext): Promise<void> {
  for (const register of AREAS) await register(app, ctx);
}
