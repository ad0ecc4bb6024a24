/**
 * Base-image refresh (README.md here): the build observer (setup), the routes and the hourly check. A sub-area of
 * organizations: it uses src/orgs only through ../public.ts.
 */
import { defineArea } from "../../kernel/area.js";
import type { JobSpec } from "../../kernel/contracts.js";
import { refreshRoutes } from "./routes.js";
import { refreshService, type RefreshDeps } from "./service.js";

export const IMAGE_REFRESH_JOB = "orgs.image-refresh";

/** Told of every build's end by the builds area: records company app builds, settles rebuilds. */
export const refreshObserver = (deps: RefreshDeps) => refreshService(deps).observer;

/** Hourly: prunes old proposals and checks every organization whose policy is notify or auto. */
export const refreshJob = (deps: RefreshDeps): JobSpec => ({
  name: IMAGE_REFRESH_JOB,
  cron: "23 * * * *",
  retryLimit: 0,
  expireInSeconds: 1800,
  handler: async () => {
    await refreshService(deps).checkAll();
  },
});

export const orgRefreshArea = defineArea<null>({
  name: "orgs-refresh",
  setup: (p) => {
    p.kernel.contribute("buildObservers", refreshObserver({ db: p.db, kernel: p.kernel, log: p.log }));
    return null;
  },
  routes: (app, ctx) => refreshRoutes(app, { db: ctx.db, kernel: ctx.kernel, log: ctx.log }),
  jobs: (p) => [refreshJob(p)],
});
