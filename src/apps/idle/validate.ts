import { ApiError } from "../../http/errors.js";

/** the longest idle time one may set: 30 days (beyond, an app is simply left running) */
export const IDLE_STOP_MAX_SECONDS = 30 * 86_400;

/** APPS_IDLE_MIN_SECONDS (60) ≤ seconds ≤ 30 days, or null (never): a clear 400 otherwise */
export function validateIdleStop(seconds: number | null | undefined, minSeconds: number): void {
  if (seconds === undefined || seconds === null) return;
  if (!Number.isInteger(seconds) || seconds < minSeconds || seconds > IDLE_STOP_MAX_SECONDS)
    throw new ApiError(
      "invalid_request",
      `idle_stop_seconds must be null (never stop) or a whole number from ${minSeconds} to ${IDLE_STOP_MAX_SECONDS}.`,
    );
}

/** a group's members follow their group's setting */
export const memberIdle = () =>
  new ApiError(
    "invalid_request",
    "A group's member stops and wakes with its group: set idle_stop_seconds on the pod group.",
  );
