import type { Db } from "../store/db.js";
import type { JobQueue } from "./queue.js";
import type { Config } from "../config/config.js";
import type { DatabaseProvider } from "../databases/provider/types.js";
import { defineDatabaseJobs } from "../databases/jobs.js";
import { definePaymentJobs } from "../billing/payments/jobs.js";
import { defineBillingJobs } from "../billing/metering/jobs.js";

/** Stored responses are replayed for 24 hours, then forgotten. */
export async function expireIdempotencyKeys(db: Db): Promise<void> {
  await db.query("DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'");
}

export async function pruneCliErrorReports(db: Db): Promise<void> {
  await db.query("DELETE FROM cli_error_reports WHERE received_at < now() - interval '30 days'");
}

/** Maintenance of the core tables. */
function defineCoreJobs(queue: JobQueue, db: Db): void {
  queue.define({ name: "core.expire-idempotency-keys", handler: () => expireIdempotencyKeys(db) });
  queue.define({ name: "core.prune-cli-error-reports", handler: () => pruneCliErrorReports(db) });
}

/** Every periodic job of the platform, in one place (cron in UTC). */
export const SCHEDULES: { name: string; cron: string }[] = [
  { name: "core.expire-idempotency-keys", cron: "*/10 * * * *" },
  { name: "core.prune-cli-error-reports", cron: "17 3 * * *" },
  { name: "databases.reconcile", cron: "* * * * *" },
  { name: "databases.watch", cron: "* * * * *" },
  { name: "databases.daily-base-backup", cron: "0 3 * * *" },
  { name: "databases.purge-removed", cron: "23 * * * *" },
  { name: "billing.auto-recharge", cron: "* * * * *" },
  { name: "billing.meter", cron: "* * * * *" },
  { name: "billing.enforce-overdue", cron: "*/5 * * * *" },
];

export function defineJobs(queue: JobQueue, deps: { db: Db; config: Config; databases: DatabaseProvider }): void {
  defineCoreJobs(queue, deps.db);
  defineDatabaseJobs(queue, { db: deps.db, config: deps.config, provider: deps.databases });
  definePaymentJobs(queue, deps);
  defineBillingJobs(queue, { db: deps.db, overdue: { action: deps.config.overdueAction, graceHours: deps.config.overdueGraceHours } });
}
