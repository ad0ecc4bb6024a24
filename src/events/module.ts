import { fileURLToPath } from "node:url";
import { defineArea } from "../kernel/area.js";
import { EVENTS_ERROR_CODES } from "./errors.js";
import { EVENTS_SCOPES } from "./scopes.js";
import { eventRoutes } from "./routes.js";

/** Events, webhooks and the live stream (issue 31): src/events/README.md. */
export const eventsArea = defineArea<Record<string, never>>({
  name: "events",
  errors: EVENTS_ERROR_CODES,
  scopes: EVENTS_SCOPES,
  migrations: fileURLToPath(new URL("./migrations/", import.meta.url)),
  tags: [{ name: "events", description: "What happened to the caller's resources: a list and a live stream." }],
  setup: () => ({}),
  routes: (_app, p) => eventRoutes(p.db),
});
