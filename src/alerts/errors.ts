import type { ErrorTable } from "../http/errors.js";

/** The error codes of alert rules: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const ALERTS_ERROR_CODES = {
  bad_alert_metric: [400, "The metric has no series for the resource kind (sites have the traffic metrics only)."],
} as const satisfies ErrorTable;
