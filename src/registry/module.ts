import { defineArea } from "../kernel/area.js";
import type { HealthCheck, Platform } from "../kernel/context.js";
import { registryConfig, type RegistryConfig } from "./config.js";
import { binaryMissing, RegistryProcess } from "./process.js";
import { LoopbackRealm } from "./realm.js";
import { registryRoutes } from "./routes.js";
import { RegistryService } from "./service.js";
import { ConfigError } from "../config/config.js";
import { down, off, up } from "../kernel/components.js";
import { REGISTRY_ERROR_CODES } from "./errors.js";
import { REGISTRY_SCOPES } from "./scopes.js";

export interface RegistryState {
  config: RegistryConfig;
  svc: RegistryService;
  process: RegistryProcess;
  realm: LoopbackRealm;
  /** running: this process runs the registry; problem: why not, when it tried */
  status: { running: boolean; problem: string | null };
}

/**
 * The image registry (issue 10, README: src/registry/README.md): docker-registry on loopback with
 * token authentication by the platform, a namespace per owner, short-lived credentials, and the
 * kernel's image access rule for deployments.
 */
export const registryArea = defineArea<RegistryState, RegistryConfig>({
  name: "registry",
  errors: REGISTRY_ERROR_CODES,
  scopes: REGISTRY_SCOPES,
  tags: [{ name: "registry", description: "The image registry: owner namespaces, login credentials, repositories." }],
  config: registryConfig,
  setup: (p, config) => {
    const server = new RegistryProcess({ bin: config.bin, dataDir: p.config.dataDir, port: config.port, log: p.log });
    const status = { running: false, problem: null as string | null };
    const worker = p.kernel.require("hosts").local.roles.includes("worker");
    const svc = new RegistryService({
      db: p.db,
      secrets: p.secrets,
      config,
      hosts: p.kernel.require("hosts"),
      local: () => (status.running ? server.address : null),
      // a host without the worker role never runs one: its binary is no one's concern
      localProblem: () => status.problem ?? (worker ? binaryMissing(config.bin) : null),
    });
    const realm = new LoopbackRealm((authorization, query) => svc.issueToken(authorization, query));
    p.kernel.provide("imageAccess", svc.imageAccess());
    return { config, svc, process: server, realm, status };
  },
  routes: (_app, _ctx, state) => registryRoutes(state.svc),
  // readiness: down while the process is not serving (a failed start, or a restart in back-off)
  health: (p, s): Record<string, HealthCheck> => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return {};
    return {
      registry: () => {
        const missing = binaryMissing(s.config.bin);
        if (missing) return off(missing);
        if (s.status.running && s.process.address) return up(s.process.address);
        return down(s.status.problem ?? "the registry process is not running; restarting with back-off");
      },
    };
  },
  // the registry runs where the worker role is; a failure leaves its endpoints answering 503, nothing else,
  // but for REGISTRY_PORT held by another program: a configuration error that stops start-up (exit 2)
  start: async (p, s) => {
    if (!p.kernel.require("hosts").local.roles.includes("worker")) return;
    const missing = binaryMissing(s.config.bin);
    if (missing) {
      p.log.warn(missing);
      return;
    }
    try {
      await startRegistry(p, s);
    } catch (err) {
      s.status.problem = `The image registry failed to start on this host: ${err instanceof Error ? err.message : String(err)}`;
      p.log.error({ err }, "registry did not start; registry endpoints answer 503");
      await s.process.stop().catch(() => {});
      await s.realm.stop().catch(() => {});
      if (err instanceof ConfigError) throw err;
    }
  },
  stop: async (p, s) => {
    const wasRunning = s.status.running;
    s.status.running = false;
    await s.process.stop();
    await s.realm.stop();
    if (wasRunning) await s.svc.forgetServer(p.kernel.require("hosts").local.id).catch(() => {});
  },
});

async function startRegistry(p: Platform, s: RegistryState): Promise<void> {
  const realm = s.config.tokenRealm ?? (await s.realm.start());
  const address = await s.process.start({ realm, certificate: await s.svc.certificate() });
  await s.svc.recordServer(p.kernel.require("hosts").local.id, address);
  s.status.running = true;
  s.status.problem = null;
  p.log.info({ address, realm }, "image registry running");
}
