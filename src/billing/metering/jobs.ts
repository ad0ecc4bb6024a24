import type { Db } from "../../store/db.js";
import type { JobQueue } from "../../jobs/queue.js";
import { meterNow } from "./meter.js";

export const METER_JOB = "billing.meter";

/** The meter runs every minute (periodic.ts); each run meters the current interval, once per resource whatever the number of runs. */
export function defineBillingJobs(queue: JobQueue, deps: { db: Db }): void {
  queue.define({ name: METER_JOB, retryLimit: 3, expireInSeconds: 600, handler: async () => { await meterNow(deps.db); } });
}
