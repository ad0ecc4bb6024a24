import type { ErrorTable } from "../http/errors.js";

/** The error codes of events and webhooks: code → [HTTP status, one-line meaning]; merged into the one catalog at start-up. */
export const EVENTS_ERROR_CODES = {
  bad_event_type: [400, "An event type or filter is not in the catalog (GET /v1/event-types lists them)."],
  bad_cursor: [400, "The cursor or Last-Event-ID is not an event of the caller's."],
} as const satisfies ErrorTable;
