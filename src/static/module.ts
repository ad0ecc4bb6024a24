import path from "node:path";
import { mkdir } from "node:fs/promises";
import { defineArea } from "../kernel/area.js";
import { staticConfig, type StaticConfig } from "./config.js";
import { staticService, type StaticService } from "./service.js";
import { siteEdgeRoutes, siteFiles } from "./edge-source.js";
import { staticRoutes } from "./routes.js";
import { staticJobs } from "./sweep.js";
import { clearStaleWork } from "./upload.js";
import { staticOwned } from "./owned.js";
import { STATIC_ERROR_CODES } from "./errors.js";
import { STATIC_SCOPES } from "./scopes.js";

export interface StaticState {
  svc: StaticService;
  config: StaticConfig;
  workDir: string;
}

/**
 * Static sites (issue 11; README.md here): sites served by the edge at <slug>.<APPS_DOMAIN> from the files of
 * their live deployment, uploaded as one archive and made live atomically. Listed before the edge, which LISTENs
 * on its route channel.
 */
export const staticArea = defineArea<StaticState, StaticConfig>({
  name: "static",
  errors: STATIC_ERROR_CODES,
  scopes: STATIC_SCOPES,
  tags: [
    {
      name: "static",
      description:
        "Static sites: deployments uploaded as one tar, tar.gz or zip archive, finalized atomically, rolled back; served by the edge.",
    },
  ],
  config: staticConfig,
  setup: (p, config) => {
    const workDir = path.join(p.config.dataDir, "static-uploads");
    const svc = staticService({ db: p.db, kernel: p.kernel, config, workDir });
    p.kernel.contribute("edgeRoutes", siteEdgeRoutes());
    p.kernel.provide("staticFiles", {
      ...siteFiles(),
      rollback: async (who, site, id) => void (await svc.rollback(who, site, id)),
    });
    p.kernel.contribute("owned", staticOwned(), "site");
    return { svc, config, workDir };
  },
  routes: (app, _ctx, s) => staticRoutes(app, { svc: s.svc, config: s.config }),
  jobs: (p, s) => staticJobs(p.db, s.config, p.log),
  instances: (_p, s) => ({
    resource: "static",
    find: (owner, ref) => s.svc.findInstance({ owner }, ref),
  }),
  start: async (_p, s) => {
    await mkdir(s.workDir, { recursive: true });
    await clearStaleWork(s.workDir);
  },
});
