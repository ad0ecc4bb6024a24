import type { Db } from "../../store/db.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { JobSpec } from "../../kernel/area.js";
import { meterNow } from "./meter.js";
import { enforceOverdue, type OverduePolicy } from "./overdue.js";

export const METER_JOB = "billing.meter";
export const OVERDUE_JOB = "billing.enforce-overdue";

/** The meter runs every minute (periodic.ts); each run meters the current interval, once per resource whatever the number of runs. */
export function billingJobs(queue: Pick<JobQueue, "send">, deps: { db: Db; overdue: OverduePolicy }): JobSpec[] {
  return [
    { name: METER_JOB, cron: "* * * * *", retryLimit: 3, expireInSeconds: 600, handler: async () => { await meterNow(deps.db); } },
    { name: OVERDUE_JOB, cron: "*/5 * * * *", retryLimit: 3, handler: async () => { await enforceOverdue(deps.db, queue, deps.overdue); } },
  ];
}
