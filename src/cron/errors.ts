import type { ErrorTable } from "../http/errors.js";

/** The error codes of cron jobs: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const CRON_ERROR_CODES = {
  bad_schedule: [400, "The schedule is not a valid cron expression, or the time zone is unknown."],
} as const satisfies ErrorTable;
