import { defineArea } from "../kernel/area.js";
import { cliRoutes } from "./routes.js";
import { pruneCliErrorReports } from "./service.js";
import { CLI_ERROR_CODES } from "./errors.js";

/** Error reports the command-line client sends on failure. */
export const cliArea = defineArea({
  name: "cli",
  errors: CLI_ERROR_CODES,
  tags: [{ name: "cli", description: "Error reports the command-line client sends on failure." }],
  routes: (_app, ctx) => cliRoutes(ctx),
  jobs: (p) => [
    { name: "core.prune-cli-error-reports", cron: "17 3 * * *", handler: () => pruneCliErrorReports(p.db) },
  ],
});
