import type { ErrorTable } from "../http/errors.js";

/** The error codes of alert rules: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const ALERTS_ERROR_CODES = {
  bad_alert_metric: [400, "The metric is not one of the resource kind's series (GET /v1/alert-rules lists the kinds)."],
} as const satisfies ErrorTable;

declare module "../http/errors.js" {
  interface AreaErrorTables {
    alerts: typeof ALERTS_ERROR_CODES;
  }
}
