import type { ErrorTable } from "../http/errors.js";

/** The error codes of custom domains: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const DOMAINS_ERROR_CODES = {
  domain_in_use: [409, "The domain's app still exists."],
  domain_taken: [409, "The domain is registered already (one domain belongs to one app platform-wide)."],
} as const satisfies ErrorTable;
