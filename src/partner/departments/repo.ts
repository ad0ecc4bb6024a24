/** SQL of the partner's department chart (partner_departments) and the locks that serialize starts per department. */
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import { xactLock } from "../../store/locks.js";

export interface DepartmentRow {
  code: string;
  parent_code: string | null;
  name: string | null;
  max_running: number | null;
  deploy_blocked: boolean;
}

const COLUMNS = "code, parent_code, name, max_running, deploy_blocked";

export async function listDepartments(q: Queryable, partnerId: string): Promise<DepartmentRow[]> {
  return allRows<DepartmentRow>(q, `SELECT ${COLUMNS} FROM partner_departments WHERE partner_id = $1 ORDER BY code`, [
    partnerId,
  ]);
}

export async function departmentExists(q: Queryable, partnerId: string, code: string): Promise<boolean> {
  const { rowCount } = await q.query("SELECT 1 FROM partner_departments WHERE partner_id = $1 AND code = $2", [
    partnerId,
    code,
  ]);
  return !!rowCount;
}

/** Serializes chart pushes of one partner (held to commit). */
export async function lockChart(q: Queryable, partnerId: string): Promise<void> {
  await xactLock(q, `partner-chart:${partnerId}`);
}

export async function upsertDepartment(
  q: Queryable,
  partnerId: string,
  d: { code: string; parent_code: string | null; name: string | null },
): Promise<void> {
  await q.query(
    `INSERT INTO partner_departments (partner_id, code, parent_code, name) VALUES ($1, $2, $3, $4)
     ON CONFLICT (partner_id, code) DO UPDATE SET parent_code = EXCLUDED.parent_code, name = EXCLUDED.name, updated_at = now()`,
    [partnerId, d.code, d.parent_code, d.name],
  );
}

export async function deleteDepartments(q: Queryable, partnerId: string, codes: string[]): Promise<void> {
  if (!codes.length) return;
  await q.query("DELETE FROM partner_departments WHERE partner_id = $1 AND code = ANY($2::text[])", [partnerId, codes]);
}

export async function setPolicy(
  q: Queryable,
  partnerId: string,
  code: string,
  p: { max_running: number | null; deploy_blocked: boolean },
): Promise<DepartmentRow | null> {
  return oneRow<DepartmentRow>(
    q,
    `UPDATE partner_departments SET max_running = $3, deploy_blocked = $4, updated_at = now()
      WHERE partner_id = $1 AND code = $2 RETURNING ${COLUMNS}`,
    [partnerId, code, p.max_running, p.deploy_blocked],
  );
}

/**
 * Takes the run-slot lock of each department (root first, so two starts in sibling departments take their common
 * parent's lock in the same order), held to the end of the admitting transaction.
 */
export async function lockDepartments(q: Queryable, partnerId: string, rootFirst: string[]): Promise<void> {
  for (const code of rootFirst) await xactLock(q, `partner-dept:${partnerId}:${code}`);
}
