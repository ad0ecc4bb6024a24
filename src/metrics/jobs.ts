import type { FastifyBaseLogger } from "fastify";
import type { JobSpec } from "../kernel/area.js";
import type { Db } from "../store/db.js";
import { pruneMinuteStats } from "../edge/public.js";
import { pruneSamples } from "./repo.js";
import type { PodSampler } from "./sampler.js";
import { KEEP_MS } from "./service.js";

export const SAMPLE_JOB = "metrics.sample-pods";
export const PRUNE_JOB = "metrics.prune";

/**
 * Every minute on each host: sample the pods it runs. Hourly: drop per-minute rows (runtime samples and the edge's
 * minutes) older than 7 days, so storage stays bounded by pods × 10,080 rows.
 */
export function metricsJobs(deps: { db: Db; sampler: PodSampler; log: FastifyBaseLogger }): JobSpec[] {
  return [
    {
      name: SAMPLE_JOB,
      perHost: true,
      cron: "* * * * *",
      concurrency: 1,
      policy: "stately",
      retryLimit: 0,
      expireInSeconds: 120,
      handler: async () => {
        await deps.sampler.sample();
      },
    },
    {
      name: PRUNE_JOB,
      cron: "17 * * * *",
      handler: async () => {
        const before = Date.now() - KEEP_MS;
        const samples = await pruneSamples(deps.db, before);
        const minutes = await pruneMinuteStats(deps.db, before);
        if (samples || minutes) deps.log.info({ samples, minutes }, "per-minute metrics older than 7 days pruned");
      },
    },
  ];
}
