/**
 * Base-image refresh as the orgs module wires it (README, "Base-image refresh"): the build observer (setup), the
 * routes and the hourly check.
 */
import type { JobSpec } from "../../kernel/contracts.js";
import { refreshService, type RefreshDeps } from "./service.js";

export { refreshRoutes } from "./routes.js";

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
