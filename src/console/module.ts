import { defineArea } from "../kernel/area.js";
import { consoleAssets, DEFAULT_DIST_DIR, type ConsoleState } from "./assets.js";
import { consoleRoutes } from "./routes.js";

export type { ConsoleState };

/** The web console (packages/console), served at / with a strict CSP; it signs in with an HttpOnly cookie session. */
export const consoleArea = defineArea<ConsoleState, { distDir: string }>({
  name: "console",
  config: (env) => ({ distDir: env.CONSOLE_DIST_DIR || DEFAULT_DIST_DIR }),
  setup: (_platform, config) => ({ assets: consoleAssets(config.distDir) }),
  routes: (_app, ctx, state) => consoleRoutes(ctx, state),
});
