import { defineArea } from "../kernel/area.js";
import type { Db } from "../store/db.js";
import { cliRoutes } from "./routes.js";

export async function pruneCliErrorReports(db: Db): Promise<void> {
  await db.query("DELETE FROM cli_error_reports WHERE received_at < now() - interval '30 days'");
}

/** Error reports the command-line client sends on failure. */
export const cliArea = defineArea({
  name: "cli",
  routes: cliRoutes,
  jobs: (p) => [{ name: "core.prune-cli-error-reports", cron: "17 3 * * *", handler: () => pruneCliErrorReports(p.db) }],
});
