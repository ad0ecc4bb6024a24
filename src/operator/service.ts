import type { Db } from "../store/db.js";
import * as repo from "./repo.js";

/** Host patch reports: hosts send one a day (FLEET_TOKEN); the operator reads them. No account is involved. */
export function fleetService(db: Db) {
  return {
    record: (host: string, report: Record<string, unknown>) => repo.insertPatchReport(db, host, report),
    list: async (limit: number) =>
      (await repo.listPatchReports(db, limit)).map((row) => ({ ...row, received_at: row.received_at.toISOString() })),
  };
}
