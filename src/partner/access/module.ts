/**
 * Site locks, visitor sessions (here) and managed registries (../registry) of the partner area, wired by
 * ../module.ts: the edge policy at setup (before the edge is built), the routes with the area's.
 */
import type { Route } from "../../http/route.js";
import type { AppContext, Platform } from "../../kernel/context.js";
import { partnerSiteAccessPolicy } from "./edge-policy.js";
import { accessRoutes } from "./routes.js";
import { accessService } from "./service.js";
import { registryRoutes } from "../registry/routes.js";
import { registryService } from "../registry/service.js";

export function accessSetup(p: Platform): void {
  const policy = partnerSiteAccessPolicy();
  p.kernel.contribute("edgeAccess", policy, policy.ownerKind);
}

export function partnerAccessRoutes(ctx: AppContext): Route[] {
  const env = ctx.env;
  const appsDomain = (env.APPS_DOMAIN || `apps.${env.BASE_DOMAIN || "localhost"}`).toLowerCase().replace(/\.$/, "");
  const edgePort = Number(env.EDGE_PORT || 8081);
  return [
    ...accessRoutes(accessService({ db: ctx.db, kernel: ctx.kernel, appsDomain, edgePort })),
    ...registryRoutes(registryService({ db: ctx.db, kernel: ctx.kernel })),
  ];
}
