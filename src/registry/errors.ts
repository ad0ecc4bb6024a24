import type { ErrorTable } from "../http/errors.js";

/** The error codes of the image registry: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const REGISTRY_ERROR_CODES = {
  registry_unavailable: [503, "The image registry (docker-registry) is not installed or not running."],
} as const satisfies ErrorTable;
