import type { Route } from "../../http/route.js";
import type { AppContext } from "../../kernel/context.js";
import type { DatabasesState } from "../state.js";
import { databasesService } from "../service.js";
import type { RouteDeps } from "./schemas.js";
import { coreRoutes } from "./core.js";
import { settingsRoutes } from "./settings.js";
import { haRoutes } from "./ha.js";
import { poolRoutes } from "./pool.js";
import { backupRoutes } from "./backups.js";
import { branchRoutes } from "./branches.js";
import { idleRoutes } from "./idle.js";
import { appsSide } from "../attachments.js";

/** Managed PostgreSQL (spec: Database endpoints), one file per sub-resource. Routes record intent through the service; jobs change the servers. */
export function databaseRoutes(ctx: AppContext, state: DatabasesState): Route[] {
  const svc = databasesService({
    db: ctx.db,
    config: ctx.config,
    restoreEnabled: state.restoreEnabled,
    jobs: ctx.jobs,
    provider: state.provider,
    admission: ctx.kernel,
    poolAvailable: state.poolAvailable,
    changes: ctx.changes,
    secrets: ctx.secrets,
    hosts: ctx.kernel.require("hosts"),
    apps: appsSide(ctx.kernel),
    idleMinSeconds: state.idleMinSeconds,
  });
  const deps: RouteDeps = { svc, config: ctx.config };
  return [coreRoutes, settingsRoutes, haRoutes, poolRoutes, backupRoutes, idleRoutes, branchRoutes].flatMap((routes) =>
    routes(deps),
  );
}
