import { defineArea } from "../kernel/area.js";
import { hostRoutes } from "./routes.js";
import { HostRegistry, hostCapacity, hostsConfig, loadHostId, type HostsConfig } from "./service.js";

/**
 * Hosts (issue 18): the machine this process runs on, registered with its roles and capacity and kept
 * alive by a heartbeat; placement of new resources; the process lease. Listed before every area that
 * places resources, so the host is registered before their start hooks run.
 */
export const hostsArea = defineArea<HostRegistry, HostsConfig>({
  name: "hosts",
  config: hostsConfig,
  setup: async (p, config) => {
    const local = { id: await loadHostId(p.config.dataDir), name: config.name, roles: config.roles };
    // organization external hosts (src/orgs/hosts) answer placements that name a host_id or host_labels
    const hosts = new HostRegistry(p.db, p.databaseUrl, p.log, local, config, () => p.kernel.use("externalHosts"));
    await hosts.register(hostCapacity({ db_max_instances: p.config.dbMaxInstances }));
    p.kernel.provide("hosts", hosts);
    // provider work for this host's resources runs only here, and only with the worker role
    p.jobs.bindHost({
      hostId: local.id,
      worker: config.roles.includes("worker"),
      available: (id) => hosts.available(p.db, id),
    });
    return hosts;
  },
  routes: (_app, ctx, hosts) => hostRoutes(ctx, hosts),
  start: async (_p, hosts) => {
    await hosts.startLease();
  },
  stop: async (_p, hosts) => {
    await hosts.stop();
  },
});
