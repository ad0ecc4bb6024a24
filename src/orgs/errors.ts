import type { ErrorTable } from "../http/errors.js";

/** The error codes of organizations: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const ORGS_ERROR_CODES = {
  host_in_use: [409, "A pod runs on the host."],
} as const satisfies ErrorTable;
