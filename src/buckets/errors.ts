import type { ErrorTable } from "../http/errors.js";

/** The error codes of buckets: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const BUCKETS_ERROR_CODES = {
  bucket_not_empty: [409, "The bucket holds objects or uploads; delete them first or pass ?force=1."],
} as const satisfies ErrorTable;
