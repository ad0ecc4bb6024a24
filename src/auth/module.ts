import { defineArea } from "../kernel/area.js";
import { authRoutes } from "./routes.js";

/** Sign-up, sign-in, tokens. */
export const authArea = defineArea({ name: "auth", routes: authRoutes });
