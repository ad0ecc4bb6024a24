import type { ErrorTable } from "../http/errors.js";

/** The error codes of preview environments: code → [HTTP status, one-line meaning]; merged into the one catalog. */
export const PREVIEWS_ERROR_CODES = {
  webhook_secret_invalid: [401, "The X-Gitlab-Token header is missing or does not match the link's webhook secret."],
} as const satisfies ErrorTable;
