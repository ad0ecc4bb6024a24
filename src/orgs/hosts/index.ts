import type { FastifyInstance } from "fastify";
import type { AppContext, Platform } from "../../kernel/context.js";
import type { Kernel } from "../../kernel/kernel.js";
import { agentFeed } from "../../apps/agent-feed.js";
import { agentRoutes } from "./agent-routes.js";
import { DesiredHub } from "./hub.js";
import { orgHostsConfig } from "./install.js";
import { orgHostRoutes } from "./routes.js";
import { orgHostsService, type OrgHostsService } from "./service.js";

/**
 * Organization external hosts (README "External hosts"), wired into the orgs area with one call per hook. State is
 * per platform (a test process runs several), kept beside its kernel.
 */
interface Part {
  svc: OrgHostsService;
  hub: DesiredHub;
  timer: NodeJS.Timeout | null;
}
const parts = new WeakMap<Kernel, Part>();
const partOf = (kernel: Kernel): Part => {
  const part = parts.get(kernel);
  if (!part) throw new Error("orgHostsSetup did not run");
  return part;
};

/** setup: the service, and placement on external hosts through kernel.use("externalHosts"). */
export function orgHostsSetup(p: Platform): void {
  const config = orgHostsConfig(p.env, p.config);
  const feed = agentFeed({ db: p.db, secrets: p.secrets, kernel: p.kernel, gpuCatalogFile: p.config.gpuCatalogFile });
  const hub = new DesiredHub(p.databaseUrl, p.log);
  const svc = orgHostsService({ db: p.db, feed, hub, config });
  p.kernel.provide("externalHosts", svc.external);
  parts.set(p.kernel, { svc, hub, timer: null });
}

/** routes: the admins' rows and the agent's protocol; open long polls answer before the server closes. */
export function orgHostsRoutes(app: FastifyInstance, ctx: AppContext): void {
  const part = partOf(ctx.kernel);
  orgHostRoutes(app, part.svc);
  agentRoutes(app, part.svc);
  app.addHook("preClose", async () => part.hub.close());
}

/** start: on worker processes, every heartbeat interval, pods of hosts gone quiet become `unknown`. */
export async function orgHostsStart(p: Platform): Promise<void> {
  if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
  const part = partOf(p.kernel);
  const every = orgHostsConfig(p.env, p.config).heartbeatSeconds * 1000;
  const tick = () =>
    void part.svc.markOffline().catch((err) => p.log.warn({ err }, "external host monitor failed; retried"));
  tick();
  part.timer = setInterval(tick, every).unref();
}

export async function orgHostsStop(p: Platform): Promise<void> {
  const part = parts.get(p.kernel);
  if (!part) return;
  if (part.timer) clearInterval(part.timer);
  part.timer = null;
  await part.hub.close();
}
