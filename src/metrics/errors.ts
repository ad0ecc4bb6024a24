import type { ErrorTable } from "../http/errors.js";

/** The error codes of metrics: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const METRICS_ERROR_CODES = {
  bad_metrics_window: [
    400,
    "from must be before to, both within the 7 days kept, step a multiple of 60 seconds, and at most 1440 points.",
  ],
} as const satisfies ErrorTable;
