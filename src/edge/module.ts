import { defineArea } from "../kernel/area.js";
import { edgeConfig, type EdgeConfig } from "./config.js";
import { Edge } from "./edge.js";
import type { HealthCheck } from "../kernel/context.js";
import { statsRoutes } from "./stats/routes.js";
import { statsJobs, statsService } from "./stats/service.js";

export type { Edge } from "./edge.js";

/**
 * The edge (issues 10 and 11; README.md here): the HTTP front door for what users deploy, on EDGE_PORT beside
 * the API, or alone on a host with ROLES=edge against the same store. Listed after every area that registers
 * route sources (kernel.contribute("edgeRoutes")), since it LISTENs on their channels at start.
 */
export const edgeArea = defineArea<Edge, EdgeConfig>({
  name: "edge",
  tags: [{ name: "stats", description: "Daily requests, errors, response times and traffic of apps, from the edge." }],
  config: edgeConfig,
  setup: (p, config) => {
    const edge = new Edge(p, config);
    // the suite's sign-in asks whether a return_to names a host served here (an API-only process resolves too)
    p.kernel.provide("edgeRoutedHost", (host) => edge.routed(host));
    return edge;
  },
  routes: (_app, p) => statsRoutes(statsService({ db: p.db, kernel: p.kernel })),
  jobs: (p, edge) => statsJobs(p.db, edge.config.statsKeepDays),
  health: (p, edge): Record<string, HealthCheck> =>
    p.kernel.require("hosts").local.roles.includes("edge") ? { edge: () => edge.health() } : {},
  start: async (p, edge) => {
    if (p.kernel.require("hosts").local.roles.includes("edge")) await edge.start();
  },
  stop: async (_p, edge) => edge.stop(),
});
