import { defineArea } from "../../kernel/area.js";
import { TokenResolver } from "../../auth/token-resolver.js";
import { ApiError } from "../../http/errors.js";
import { suiteOf } from "../state.js";
import { directoryRoutes } from "./routes.js";
import { directoryService, type DirectoryService } from "./service.js";
import { SYNC_JOB } from "./public.js";
import { everyMinute } from "../../kernel/periodic.js";

export const SWEEP_JOB = "suite.directory.sweep";

interface DirectoryState {
  service: DirectoryService;
  /** the API's resolver, once routes are registered; a worker-only process announces through its own */
  tokens: TokenResolver | null;
}

/**
 * The suite's directory part (README.md of src/suite, "Directory"): departments mirrored from the linked company's
 * chart, members' departments, deprovisioning. Syncs run on the route, after each suite login (one job per
 * organization) and in a sweep every minute that runs asked-for syncs whose job was lost and those older than
 * SUITE_SYNC_MINUTES.
 */
export const suiteDirectoryArea = defineArea<DirectoryState>({
  name: "suite-directory",
  setup: (p) => {
    const fallback = new TokenResolver(p.db, p.databaseUrl, p.log);
    const state: DirectoryState = {
      tokens: null,
      service: directoryService({
        db: p.db,
        kernel: p.kernel,
        log: p.log,
        suite: suiteOf(p),
        tokens: () => state.tokens ?? fallback,
      }),
    };
    return state;
  },
  routes: (_app, ctx, state) => {
    state.tokens = ctx.tokens;
    return directoryRoutes(state.service);
  },
  jobs: (_p, state) => [
    {
      name: SYNC_JOB,
      // one queued per organization: a burst of logins makes one sync (requestDepartmentSync's singleton key)
      policy: "stately",
      retryLimit: 3,
      expireInSeconds: 30 * 60,
      handler: async (data: { orgId: string }) => {
        await state.service.syncRequested(data.orgId).catch((err: unknown) => {
          // unlinked since, or no suite configured: nothing to retry (the suite not answering is retried)
          const code = err instanceof ApiError ? err.code : null;
          if (code === "not_found" || code === "suite_not_configured") return;
          throw err;
        });
      },
    },
    everyMinute(SWEEP_JOB, () => state.service.sweep(), { expireInSeconds: 55 * 60 }),
  ],
});
