import { defineArea } from "../kernel/area.js";
import { metaRoutes } from "./routes.js";

/** Edition, manual, OpenAPI document, GPU catalog. */
export const metaArea = defineArea({ name: "meta", routes: metaRoutes });
