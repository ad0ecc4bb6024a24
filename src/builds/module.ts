import path from "node:path";
import { defineArea, rowLookup } from "../kernel/area.js";
import { buildsConfig, type BuildsConfig } from "./config.js";
import { buildsService, WAKE_JOB, type BuildsService } from "./service.js";
import { BuildRunner } from "./runner.js";
import { buildRoutes } from "./routes/builds.js";
import { builderProblem } from "./buildah.js";
import * as repo from "./repo.js";
import { rebuildsContract } from "./rebuilds.js";
import { outboundFor } from "../net/outbound.js";
import { BUILDS_ERROR_CODES } from "./errors.js";
import { BUILDS_SCOPES } from "./scopes.js";

export interface BuildsState {
  config: BuildsConfig;
  service: BuildsService;
  runner: BuildRunner;
  /** whether this process runs the host's builds (worker role, buildah present) */
  running: { on: boolean };
}

/**
 * Builds (issue 12, README: src/builds/README.md): images built from an uploaded source archive with
 * `buildah bud --isolation chroot` on the host that holds the build, pushed to the owner's registry
 * namespace, and optionally rolled out to a pod or pod group.
 */
export const buildsArea = defineArea<BuildsState, BuildsConfig>({
  name: "builds",
  errors: BUILDS_ERROR_CODES,
  scopes: BUILDS_SCOPES,
  tags: [
    {
      name: "builds",
      description:
        "Server-side image builds from an uploaded source archive, pushed to the owner's registry namespace.",
    },
  ],
  config: buildsConfig,
  setup: (p, config) => {
    const root = path.join(p.config.dataDir, "builds");
    const running = { on: false };
    const hostId = p.kernel.require("hosts").local.id;
    const runner = new BuildRunner({
      db: p.db,
      secrets: p.secrets,
      kernel: p.kernel,
      config,
      log: p.log,
      root,
      hostId,
      lease: () => p.kernel.require("hosts").leaseId(),
      outbound: outboundFor(p.env),
    });
    const service = buildsService({
      db: p.db,
      secrets: p.secrets,
      kernel: p.kernel,
      jobs: p.jobs,
      config,
      root,
      local: () => (running.on ? runner : null),
    });
    p.kernel.provide("rebuilds", rebuildsContract(service, p.kernel, config, outboundFor(p.env))); // base-image refresh (issue 14)
    p.kernel.provide("sourceBuilds", {
      fromArchive: (principal, src) => service.fromArchive(principal, src),
      progress: async (principal, id) => {
        const row = await repo.findBuild(p.db, principal.owner, id);
        return row && { status: row.status, image: row.image, reason: row.status_reason };
      },
    }); // preview environments (src/previews)
    return { config, service, runner, running };
  },
  routes: (app, _ctx, s) => buildRoutes(app, s.service, s.config),
  jobs: (_p, s) => [
    {
      // a build was started through another host's API: this host's runner looks for it now, not at its next poll
      name: WAKE_JOB,
      perHost: true,
      retryLimit: 0,
      expireInSeconds: 60,
      handler: async () => {
        if (s.running.on) s.runner.wake();
      },
    },
  ],
  instances: (p) => rowLookup("builds", (owner, ref) => repo.findBuild(p.db, owner, ref)),
  // builds left `building` by a platform that died are marked failed, then queued ones run
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    const problem = await builderProblem(s.config.buildah);
    if (problem) {
      p.log.warn(`${problem}; build endpoints answer 503 builder_unavailable`);
      await s.runner.recover().catch((err) => p.log.error({ err }, "builds left running were not marked failed"));
      return;
    }
    await s.runner.start();
    s.running.on = true;
  },
  stop: async (_p, s) => {
    if (!s.running.on) return;
    s.running.on = false;
    await s.runner.stop();
  },
});
