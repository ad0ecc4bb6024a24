/**
 * The GitLab integration (README.md here): the routes and the two jobs. Settings: GITLAB_TIMEOUT_MS (each GitLab
 * request, default 10000), GITLAB_SYNC_RETRIES (attempts after a sync's first failure, with the job queue's
 * back-off; default 2). A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
import type { FastifyInstance } from "fastify";
import { defineArea } from "../../kernel/area.js";
import { int } from "../../config/config.js";
import type { AppContext, Platform } from "../../kernel/context.js";
import { outboundFor } from "../../net/outbound.js";
import { gitJobs, type GitJobDeps } from "./jobs.js";
import { gitlabRoutes } from "./routes.js";
import { gitlabService } from "./service.js";

type Env = Record<string, string | undefined>;

const timeoutMs = (env: Env) => int(env, "GITLAB_TIMEOUT_MS", 10_000, 100, 120_000);

export function gitlabIntegrationRoutes(app: FastifyInstance, ctx: AppContext): void {
  gitlabRoutes(
    app,
    gitlabService({
      db: ctx.db,
      secrets: ctx.secrets,
      jobs: ctx.jobs,
      timeoutMs: timeoutMs(ctx.env),
      outbound: outboundFor(ctx.env),
    }),
  );
}

/** What the jobs work with (tests run a scan pass with it). */
export const gitJobDeps = (p: Platform): GitJobDeps => ({
  db: p.db,
  kernel: p.kernel,
  secrets: p.secrets,
  jobs: p.jobs,
  log: p.log,
  timeoutMs: timeoutMs(p.env),
  outbound: outboundFor(p.env),
  retries: int(p.env, "GITLAB_SYNC_RETRIES", 2, 0, 10),
});

export const gitlabJobs = (p: Platform) => gitJobs(gitJobDeps(p));

export const orgGitlabArea = defineArea<null>({
  name: "orgs-gitlab",
  routes: (app, ctx) => gitlabIntegrationRoutes(app, ctx),
  jobs: (p) => gitlabJobs(p),
});
