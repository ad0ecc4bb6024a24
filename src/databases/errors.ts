import type { ErrorTable } from "../http/errors.js";

/** The error codes of managed databases: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const DATABASES_ERROR_CODES = {
  bad_version: [400, "PostgreSQL version must be 16 or 17."],
  bad_time: [400, "Restore time is not RFC 3339."],
  out_of_retention: [400, "Restore time is outside the retention window."],
  future_time: [400, "Restore time is in the future."],
  stop_not_supported: [400, "Only dev databases can be stopped."],
  not_stopped: [400, "The operation needs a stopped resource."],
  bad_cidr: [400, "An allowlist entry is not a valid CIDR."],
  extension_not_allowed: [400, "The extension is not on the allow-list."],
  ha_not_enabled: [400, "High availability is not enabled."],
  ha_not_supported: [400, "High availability is not available for this size."],
  database_removed: [409, "The database was deleted; restore it first."],
  still_creating: [409, "The resource is still being created."],
  not_restorable: [409, "The resource cannot be restored."],
  credentials_already_revealed: [409, "The one-time reveal was used."],
  restore_not_ready: [501, "Restore is not enabled on this platform."],
  rotation_failed: [503, "The password could not be applied."],
  pool_unavailable: [503, "Connection pooling is not installed on this host."],
} as const satisfies ErrorTable;
