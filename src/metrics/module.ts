import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { createRuntime } from "../runtime/index.js";
import { METRICS_ERROR_CODES } from "./errors.js";
import { metricsRoutes } from "./routes.js";
import { metricsJobs } from "./jobs.js";
import { PodSampler } from "./sampler.js";

export interface MetricsState {
  sampler: PodSampler;
}

/** Per-minute metrics of pods and the operator's Prometheus endpoint (issue 31): src/metrics/README.md. */
export const metricsArea = defineArea<MetricsState>({
  name: "metrics",
  errors: METRICS_ERROR_CODES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [{ name: "metrics", description: "Per-minute series of the caller's pods: CPU, memory, restarts, traffic." }],
  setup: (p) => ({
    sampler: new PodSampler({
      db: p.db,
      runtime: createRuntime(p.env),
      hostId: p.kernel.require("hosts").local.id,
      log: p.log,
    }),
  }),
  routes: (_app, ctx) => metricsRoutes(ctx),
  jobs: (p, s) =>
    metricsJobs({
      db: p.db,
      sampler: s.sampler,
      kernel: p.kernel,
      hostId: p.kernel.require("hosts").local.id,
      log: p.log,
    }),
});
