import { defineArea } from "../kernel/area.js";
import { authRoutes } from "./routes.js";

/** Sign-up, sign-in, tokens. */
export const authArea = defineArea({
  name: "auth",
  tags: [{ name: "auth", description: "Sign-up, sign-in and sign-out; the caller's token." }],
  routes: authRoutes,
});
