import type { ScopeTable } from "../auth/scopes.js";
import "./contract.js";

/** `events:read` (the list and the live stream) and `webhooks:read|write` (endpoints and their deliveries). */
export const EVENTS_SCOPES = {
  events: { instances: false },
  webhooks: { instances: false, guard: "orgWebhookAdmins", guardErrors: ["forbidden_role"] },
} as const satisfies ScopeTable;
