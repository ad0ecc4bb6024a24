import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { int } from "../config/config.js";
import { outboundFor } from "../net/outbound.js";
import { createRuntime } from "../runtime/index.js";
import type { RuntimeProvider } from "../runtime/provider.js";
import { DRAINS_SCOPES } from "./scopes.js";
import { drainRoutes } from "./routes.js";
import { drainService, type DrainService } from "./service.js";
import { DrainShipper, type ShipperConfig } from "./shipper.js";
import { EdgeLineCollector, type CollectorConfig } from "./edge-collector.js";

export interface DrainsConfig {
  shipper: ShipperConfig;
  collector: CollectorConfig;
}

export interface DrainsState {
  service: DrainService;
  shipper: DrainShipper;
  collector: EdgeLineCollector;
  runtime: RuntimeProvider;
}

/** Log drains (issue 31): pod logs and the edge's access lines shipped to HTTPS or syslog; src/drains/README.md. */
export const drainsArea = defineArea<DrainsState, DrainsConfig>({
  name: "drains",
  scopes: DRAINS_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [
    {
      name: "log-drains",
      description: "Pod logs and the edge's access lines shipped to an HTTPS endpoint (NDJSON) or to syslog.",
    },
  ],
  config: (env) => ({
    shipper: {
      pollMs: int(env, "DRAIN_POLL_MS", 1000, 50, 60_000),
      settleMs: int(env, "DRAIN_SETTLE_MS", 1000, 0, 60_000),
      batchLines: int(env, "DRAIN_BATCH_LINES", 500, 1, 10_000),
      batchBytes: int(env, "DRAIN_BATCH_BYTES", 1024 * 1024, 1024, 16 * 1024 * 1024),
      batchesPerPass: 20,
      timeoutMs: int(env, "DRAIN_TIMEOUT_MS", 10_000, 100, 60_000),
      retryBaseMs: int(env, "DRAIN_RETRY_BASE_MS", 1000, 10, 600_000),
      retryMaxMs: int(env, "DRAIN_RETRY_MAX_MS", 60_000, 10, 3_600_000),
      maxLagMs: int(env, "DRAIN_MAX_LAG_SECONDS", 900, 1, 86_400) * 1000,
      claimSeconds: int(env, "DRAIN_CLAIM_SECONDS", 120, 1, 3600),
      concurrency: int(env, "DRAIN_CONCURRENCY", 16, 1, 256),
    },
    collector: {
      flushMs: int(env, "DRAIN_EDGE_FLUSH_MS", 1000, 50, 60_000),
      bufferLines: int(env, "DRAIN_EDGE_BUFFER_LINES", 10_000, 1, 1_000_000),
    },
  }),
  setup: (p, config) => {
    const outbound = outboundFor(p.env);
    const collector = new EdgeLineCollector(p.db, config.collector, p.log);
    // the edge calls it for every answered request; it takes note only while the edge runs in this process
    p.kernel.contribute("edgeAccessLog", collector);
    const runtime = createRuntime(p.env);
    return {
      runtime,
      service: drainService({ db: p.db, secrets: p.secrets, outbound, kernel: p.kernel }),
      collector,
      shipper: new DrainShipper({
        db: p.db,
        runtime,
        hostId: p.kernel.require("hosts").local.id,
        outbound,
        secrets: p.secrets,
        log: p.log,
        config: config.shipper,
      }),
    };
  },
  routes: (_app, _p, s) => drainRoutes(s.service),
  start: async (p, s) => {
    const roles = p.kernel.require("hosts").local.roles;
    if (roles.includes("edge")) await s.collector.start();
    if (!roles.includes("worker")) return;
    // without a container runtime here there are no pod logs to read; the edge's lines still ship
    s.shipper.podsReadable = !(await s.runtime.unavailable());
    s.shipper.start();
  },
  stop: async (_p, s) => {
    s.shipper.stop();
    await s.collector.stop();
  },
});
