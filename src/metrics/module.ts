import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { createRuntime } from "../runtime/index.js";
import { METRICS_ERROR_CODES } from "./errors.js";
import { metricsRoutes } from "./routes.js";
import { metricsJobs } from "./jobs.js";
import { PodSampler } from "./sampler.js";
import { sampleDatabases } from "./database-sampler.js";

export interface MetricsState {
  sampler: PodSampler;
  /** one pass over this host's databases (the sampling job runs it every minute; tests call it directly, at `now`) */
  sampleDatabases: (now?: number) => Promise<number>;
}

/** Per-minute metrics of pods and the operator's Prometheus endpoint (issue 31): src/metrics/README.md. */
export const metricsArea = defineArea<MetricsState>({
  name: "metrics",
  errors: METRICS_ERROR_CODES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [{ name: "metrics", description: "Per-minute series of the caller's pods: CPU, memory, restarts, traffic." }],
  setup: (p) => {
    const hostId = p.kernel.require("hosts").local.id;
    return {
      sampler: new PodSampler({ db: p.db, runtime: createRuntime(p.env), hostId, log: p.log }),
      sampleDatabases: (now?: number) => sampleDatabases({ db: p.db, kernel: p.kernel, hostId, log: p.log }, now),
    };
  },
  routes: (_app, ctx) => metricsRoutes(ctx),
  jobs: (p, s) => metricsJobs({ db: p.db, sampler: s.sampler, sampleDatabases: s.sampleDatabases, log: p.log }),
});
