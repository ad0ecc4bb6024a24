import type { ErrorTable } from "../http/errors.js";

/** The error codes of image builds: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const BUILDS_ERROR_CODES = {
  builder_unavailable: [503, "The image builder (buildah) is not installed or not working on this host."],
} as const satisfies ErrorTable;
