import type { Db } from "../../store/db.js";
import type { JobQueue } from "../../jobs/queue.js";
import { meterNow } from "./meter.js";
import { enforceOverdue, type OverduePolicy } from "./overdue.js";

export const METER_JOB = "billing.meter";
export const OVERDUE_JOB = "billing.enforce-overdue";

/** The meter runs every minute (periodic.ts); each run meters the current interval, once per resource whatever the number of runs. */
export function defineBillingJobs(queue: JobQueue, deps: { db: Db; overdue: OverduePolicy }): void {
  queue.define({ name: METER_JOB, retryLimit: 3, expireInSeconds: 600, handler: async () => { await meterNow(deps.db); } });
  queue.define({ name: OVERDUE_JOB, retryLimit: 3, handler: async () => { await enforceOverdue(deps.db, queue, deps.overdue); } });
}
