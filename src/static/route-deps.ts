import type { StaticConfig } from "./config.js";
import type { StaticService } from "./service.js";

/** What the route files get from the module (a file of its own: schemas.ts is imported by the service). */
export interface StaticRouteDeps {
  svc: StaticService;
  config: StaticConfig;
}
