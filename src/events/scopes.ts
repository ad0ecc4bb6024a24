import type { ScopeTable } from "../auth/scopes.js";

/** `events:read` (the list and the live stream) and `webhooks:read|write` (endpoints and their deliveries). */
export const EVENTS_SCOPES = {
  events: { instances: false },
  webhooks: { instances: false },
} as const satisfies ScopeTable;
