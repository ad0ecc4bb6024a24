import { defineArea } from "../kernel/area.js";
import { operatorRoutes } from "./routes.js";

/** The platform operator's API and the fleet patch report. */
export const operatorArea = defineArea({
  name: "operator",
  tags: [{ name: "operator", description: "The platform operator's API (operator token), including hosts." }],
  routes: (_app, ctx) => operatorRoutes(ctx),
});
