import { allRows, type Queryable } from "../store/db.js";

export interface PatchReportRow {
  id: string;
  host: string;
  report: unknown;
  received_at: Date;
}

export async function insertPatchReport(q: Queryable, host: string, report: unknown): Promise<string> {
  const { rows } = await q.query<{ id: string }>(
    "INSERT INTO fleet_patch_reports (host, report) VALUES ($1, $2) RETURNING id::text",
    [host, report],
  );
  return rows[0].id;
}

export async function listPatchReports(q: Queryable, limit: number): Promise<PatchReportRow[]> {
  return allRows<PatchReportRow>(
    q,
    "SELECT id::text, host, report, received_at FROM fleet_patch_reports ORDER BY id DESC LIMIT $1",
    [limit],
  );
}
