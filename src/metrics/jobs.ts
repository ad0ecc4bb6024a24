import type { FastifyBaseLogger } from "fastify";
import { everyMinute, type JobSpec } from "../kernel/area.js";
import type { Db } from "../store/db.js";
import type { PodSampler } from "./sampler.js";
import { pruneMetrics, rollupHours } from "./rollup.js";

export const SAMPLE_JOB = "metrics.sample-pods";
export const ROLLUP_JOB = "metrics.rollup";
export const PRUNE_JOB = "metrics.prune";

/**
 * Every minute on each host: sample the pods and the databases it runs. Hourly: roll finished hours into hour rows,
 * then (later in the hour) drop minute rows older than 7 days and hour rows older than 90 (README "Retention and
 * storage").
 */
export function metricsJobs(deps: {
  db: Db;
  sampler: PodSampler;
  sampleDatabases: () => Promise<number>;
  log: FastifyBaseLogger;
}): JobSpec[] {
  return [
    everyMinute(
      SAMPLE_JOB,
      () =>
        Promise.all([
          deps.sampler.sample(),
          deps.sampleDatabases().catch((err: unknown) => {
            deps.log.warn({ err }, "database metrics: this minute's pass failed");
          }),
        ]),
      { expireInSeconds: 120, perHost: true },
    ),
    {
      name: ROLLUP_JOB,
      cron: "5 * * * *",
      handler: async () => {
        const done = await rollupHours(deps.db);
        if (done.rows) deps.log.info(done, "per-minute metrics rolled up into hours");
      },
    },
    {
      name: PRUNE_JOB,
      cron: "17 * * * *",
      handler: async () => {
        const pruned = await pruneMetrics(deps.db);
        if (pruned.minutes || pruned.hours) deps.log.info(pruned, "metrics past their retention pruned");
      },
    },
  ];
}
