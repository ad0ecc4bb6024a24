import { ApiError, badRequest } from "../../http/errors.js";

/** the longest idle time one may set: 30 days (beyond, a database is simply left running), as for pods */
export const IDLE_STOP_MAX_SECONDS = 30 * 86_400;

/**
 * Scale-to-zero is for dev databases only: basic and above are always on (the spec's stop rule), so a paid
 * database is never cut from its clients by idleness. Seconds: DB_IDLE_MIN_SECONDS (60) to 30 days, or null (never).
 */
export function validateIdleStop(seconds: number | null | undefined, size: string, minSeconds: number): void {
  if (seconds === undefined || seconds === null) return;
  if (size !== "dev")
    throw badRequest(
      "stop_not_supported",
      "Only dev databases can stop when idle (idle_stop_seconds); basic and above are always on.",
    );
  if (!Number.isInteger(seconds) || seconds < minSeconds || seconds > IDLE_STOP_MAX_SECONDS)
    throw new ApiError(
      "invalid_request",
      `idle_stop_seconds must be null (never stop) or a whole number from ${minSeconds} to ${IDLE_STOP_MAX_SECONDS}.`,
    );
}
