import type { ErrorTable } from "../http/errors.js";

/** The error codes of the CLI's error reports: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const CLI_ERROR_CODES = {
  report_limit_exceeded: [429, "Too many CLI error reports in 24 hours."],
} as const satisfies ErrorTable;
