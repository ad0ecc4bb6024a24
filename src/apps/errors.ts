import type { ErrorTable } from "../http/errors.js";

/** The error codes of apps (pods and volumes): code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const APPS_ERROR_CODES = {
  volume_in_use: [409, "The volume is attached to a pod."],
} as const satisfies ErrorTable;
