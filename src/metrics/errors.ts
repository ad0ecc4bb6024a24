import type { ErrorTable } from "../http/errors.js";

/** The error codes of metrics: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const METRICS_ERROR_CODES = {
  bad_metrics_window: [
    400,
    "from must be before to; step a multiple of 60 seconds; minutes reach 7 days back, whole-hour steps 90 days; at most 1440 points.",
  ],
} as const satisfies ErrorTable;
