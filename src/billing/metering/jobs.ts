import type { Db } from "../../store/db.js";
import type { JobSpec } from "../../kernel/area.js";
import type { Kernel } from "../../kernel/kernel.js";
import { meterNow } from "./meter.js";
import { enforceOverdue, type OverduePolicy } from "./overdue.js";

export const METER_JOB = "billing.meter";
export const OVERDUE_JOB = "billing.enforce-overdue";

/**
 * The meter runs every minute over every area's metering source; each run meters the current interval,
 * once per resource whatever the number of runs. The overdue job pauses and resumes through the kernel.
 */
export function billingJobs(deps: { db: Db; kernel: Kernel; overdue: OverduePolicy }): JobSpec[] {
  return [
    {
      name: METER_JOB,
      cron: "* * * * *",
      retryLimit: 3,
      expireInSeconds: 600,
      handler: async () => {
        // organizations in personal billing have their company assets paid by the creating member (kernel.payer)
        await meterNow(deps.db, deps.kernel.metering, new Date(), { payer: (q, o, a) => deps.kernel.payer(q, o, a) });
      },
    },
    {
      name: OVERDUE_JOB,
      cron: "*/5 * * * *",
      retryLimit: 3,
      handler: async () => {
        await enforceOverdue(deps, deps.overdue);
      },
    },
  ];
}
