import { defineArea } from "../../kernel/area.js";
import type { Platform } from "../../kernel/context.js";
import { agentFeed } from "../../apps/public.js";
import { agentRoutes } from "./agent-routes.js";
import { DesiredHub } from "./hub.js";
import { orgHostsConfig } from "./install.js";
import { orgHostRoutes } from "./routes.js";
import { orgHostsService, type OrgHostsService } from "./service.js";

/** Per platform (a test process runs several): the service, the agents' long polls and the offline monitor. */
interface OrgHostsState {
  svc: OrgHostsService;
  hub: DesiredHub;
  timer: NodeJS.Timeout | null;
}

/** setup: the service, and placement on external hosts through kernel.use("externalHosts"). */
function setup(p: Platform): OrgHostsState {
  const config = orgHostsConfig(p.env, p.config);
  const feed = agentFeed({ db: p.db, secrets: p.secrets, kernel: p.kernel, gpuCatalogFile: p.config.gpuCatalogFile });
  const hub = new DesiredHub(p.databaseUrl, p.log);
  const svc = orgHostsService({ db: p.db, feed, hub, config });
  p.kernel.provide("externalHosts", svc.external);
  return { svc, hub, timer: null };
}

/**
 * Organization external hosts (README.md here): hosts an organization runs its pods on, with the agent's protocol.
 * A sub-area of organizations: it uses src/orgs only through ../public.ts.
 */
export const orgHostsArea = defineArea<OrgHostsState>({
  name: "orgs-hosts",
  setup,
  // the admins' rows and the agent's protocol; open long polls answer before the server closes
  routes: (app, _ctx, part) => {
    orgHostRoutes(app, part.svc);
    agentRoutes(app, part.svc);
    app.addHook("preClose", async () => part.hub.close());
  },
  // on worker processes, every heartbeat interval, pods of hosts gone quiet become `unknown`
  start: async (p, part) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    const every = orgHostsConfig(p.env, p.config).heartbeatSeconds * 1000;
    const tick = () =>
      void part.svc.markOffline().catch((err) => p.log.warn({ err }, "external host monitor failed; retried"));
    tick();
    part.timer = setInterval(tick, every).unref();
  },
  stop: async (_p, part) => {
    if (part.timer) clearInterval(part.timer);
    part.timer = null;
    await part.hub.close();
  },
});
