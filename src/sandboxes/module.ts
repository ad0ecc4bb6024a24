import { defineArea, rowLookup } from "../kernel/area.js";
import { createRuntime } from "../runtime/index.js";
import * as repo from "./repo.js";
import { sandboxRoutes } from "./routes.js";
import { sandboxJobs, reap } from "./jobs.js";
import { sandboxesConfig, sandboxesService, type SandboxesConfig, type SandboxesState } from "./service.js";
import { SANDBOXES_SCOPES } from "./scopes.js";

export type { SandboxesState } from "./service.js";

/**
 * Sandboxes (issue 10): short-lived isolated containers for running code, on the container runtime
 * (src/runtime). No network unless asked; removed by the runtime itself when their time runs out, and
 * the rows marked by the reaper (every minute, right after each sandbox's time, and at start).
 */
export const sandboxesArea = defineArea<SandboxesState, SandboxesConfig>({
  name: "sandboxes",
  scopes: SANDBOXES_SCOPES,
  tags: [
    {
      name: "sandboxes",
      description: "Short-lived isolated containers for running code: create, exec, delete; no network by default.",
    },
  ],
  config: sandboxesConfig,
  setup: (p, config) => {
    const runtime = createRuntime(p.env);
    const service = sandboxesService({ db: p.db, jobs: p.jobs, runtime, kernel: p.kernel, config, log: p.log });
    return { runtime, config, service };
  },
  routes: (_app, _ctx, state) => sandboxRoutes(state),
  jobs: (p, s) => sandboxJobs({ db: p.db, runtime: s.runtime, hostId: p.kernel.require("hosts").local.id, log: p.log }),
  instances: (p) => rowLookup("sandboxes", (owner, ref) => repo.findSandbox(p.db, owner, ref)),
  // sandboxes that timed out while no platform process ran are marked (their containers are gone already)
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    await reap({ db: p.db, runtime: s.runtime, hostId: p.kernel.require("hosts").local.id, log: p.log }).catch((err) =>
      p.log.error({ err }, "start-up sandbox reap failed; the periodic reaper retries"),
    );
  },
});
