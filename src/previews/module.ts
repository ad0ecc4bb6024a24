/**
 * Preview environments per GitLab merge request (issue 30, README.md here): links, the webhook, and the jobs that
 * build, deploy and remove previews through the builds and apps areas' capabilities (admission runs there).
 * Settings: PREVIEWS_GITLAB_TIMEOUT_MS (each GitLab request, default 30000), PREVIEWS_POLL_SECONDS (between looks
 * at a build in progress, default 2). The preview URL follows APPS_DOMAIN and EDGE_PORT as the apps area does.
 */
import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { int } from "../config/config.js";
import type { Platform } from "../kernel/context.js";
import { outboundFor } from "../net/outbound.js";
import { publicBaseUrl } from "../orgs/public.js";
import { PREVIEWS_ERROR_CODES } from "./errors.js";
import { PREVIEWS_SCOPES } from "./scopes.js";
import { previewsService, type PreviewsService, type PreviewUrls } from "./service.js";
import { previewJobs } from "./jobs.js";
import { previewRoutes } from "./routes.js";

interface PreviewsState {
  urls: PreviewUrls;
  service: PreviewsService;
}

function urlsOf(p: Platform): PreviewUrls {
  return {
    appsDomain: p.env.APPS_DOMAIN || `apps.${p.env.BASE_DOMAIN || "localhost"}`,
    edgePort: int(p.env, "EDGE_PORT", 8081, 0, 65535),
    publicBase: publicBaseUrl(p.env, p.config),
  };
}

export const previewsArea = defineArea<PreviewsState>({
  name: "previews",
  errors: PREVIEWS_ERROR_CODES,
  scopes: PREVIEWS_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [
    { name: "previews", description: "Preview environments per GitLab merge request: a build, a pod and a URL each." },
  ],
  setup: (p) => {
    const urls = urlsOf(p);
    const service = previewsService({
      ...{ db: p.db, jobs: p.jobs, secrets: p.secrets, outbound: outboundFor(p.env), urls },
      platform: p,
    });
    return { urls, service };
  },
  routes: (app, _ctx, s) => previewRoutes(app, s.service, s.urls),
  jobs: (p, s) =>
    previewJobs({
      db: p.db,
      platform: p,
      kernel: p.kernel,
      jobs: p.jobs,
      secrets: p.secrets,
      outbound: outboundFor(p.env),
      log: p.log,
      urls: s.urls,
      timeoutMs: int(p.env, "PREVIEWS_GITLAB_TIMEOUT_MS", 30_000, 100, 300_000),
      pollSeconds: int(p.env, "PREVIEWS_POLL_SECONDS", 2, 0, 60),
    }),
});
