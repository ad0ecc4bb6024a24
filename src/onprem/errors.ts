import type { ErrorTable } from "../http/errors.js";

/** The error codes of on-premises licensing: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const ONPREM_ERROR_CODES = {
  onprem_approval_required: [403, "On-premises access is not approved yet."],
  download_expired: [403, "The download address has expired or was altered; ask for a new one."],
  terms_required: [412, "The current on-premises terms are not accepted."],
} as const satisfies ErrorTable;
