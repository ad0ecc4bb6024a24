import { defineArea } from "../kernel/area.js";
import { metaRoutes } from "./routes.js";

/** Edition, manual, OpenAPI document, GPU catalog. */
export const metaArea = defineArea({
  name: "meta",
  tags: [
    {
      name: "meta",
      description:
        "Edition, the manual for AI agents, this OpenAPI document, the GPU catalog and the fleet patch report.",
    },
  ],
  routes: metaRoutes,
});
