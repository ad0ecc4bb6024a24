import type { ErrorTable } from "../http/errors.js";

/** The error codes of static sites: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const STATIC_ERROR_CODES = {
  bad_archive: [400, "The upload is not a usable tar, tar.gz or zip archive; the message names the entry."],
  not_uploaded: [409, "The deployment has no files yet; upload them first."],
} as const satisfies ErrorTable;
