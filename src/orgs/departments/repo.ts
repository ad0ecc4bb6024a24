/**
 * SQL of the organization chart: departments (list, find, set-based insert/update/delete of a sync) and the
 * members' role and department (the member sync's one UPDATE). Every bulk change is one statement over unnest()ed
 * arrays, so a sync of thousands of rows is a handful of round trips.
 */
import { allRows, oneRow, type Queryable } from "../../store/db.js";
import { insertChartRows, updateChartRows, type OrgRole } from "../public.js";

export interface DepartmentRow {
  id: string;
  code: string;
  name: string;
  parent_id: string | null;
  parent_code: string | null;
  approver_email: string | null;
  deploy_blocked: boolean;
  created_at: Date;
  updated_at: Date;
  member_count: number;
}

/** What a sync compares: a department's state that the chart's sources (CSV, sync, PUT) set. */
export interface ChartRow {
  id: string;
  code: string;
  name: string;
  parent_id: string | null;
  approver_email: string | null;
}

/** A department as a sync writes it. */
export interface DepartmentWrite {
  id: string;
  code: string;
  name: string;
  parentId: string | null;
  approverEmail: string | null;
}

// one lock for every change of the chart, the suite's mirror's too (the core's chart-mirror-repo.ts)
export { lockChart } from "../public.js";

const DEPARTMENT_COLUMNS = `d.id, d.code, d.name, d.parent_id, pd.code AS parent_code, d.approver_email,
  d.deploy_blocked, d.created_at, d.updated_at, coalesce(c.n, 0)::int AS member_count`;

export async function listDepartments(q: Queryable, orgId: string): Promise<DepartmentRow[]> {
  return allRows<DepartmentRow>(
    q,
    `SELECT ${DEPARTMENT_COLUMNS}
       FROM org_departments d
       LEFT JOIN org_departments pd ON pd.id = d.parent_id
       LEFT JOIN (SELECT department_id, count(*) AS n FROM org_members WHERE org_id = $1 AND department_id IS NOT NULL
                   GROUP BY department_id) c ON c.department_id = d.id
      WHERE d.org_id = $1 AND d.removed_at IS NULL
      ORDER BY d.code`,
    [orgId],
  );
}

/** One department by id or, failing that, by code (an id wins when a code looks like another's id). */
export async function findDepartment(q: Queryable, orgId: string, ref: string): Promise<DepartmentRow | null> {
  return oneRow<DepartmentRow>(
    q,
    `SELECT ${DEPARTMENT_COLUMNS}
       FROM org_departments d
       LEFT JOIN org_departments pd ON pd.id = d.parent_id
       LEFT JOIN LATERAL (SELECT count(*) AS n FROM org_members m WHERE m.department_id = d.id) c ON true
      WHERE d.org_id = $1 AND d.removed_at IS NULL AND (d.id::text = lower($2) OR d.code = $2)
      ORDER BY (d.id::text = lower($2)) DESC
      LIMIT 1`,
    [orgId, ref],
  );
}

/** Live departments only: one the suite mirror tombstoned (removed_at) is out of every list and sync. */
export async function chartOf(q: Queryable, orgId: string): Promise<ChartRow[]> {
  return allRows<ChartRow>(
    q,
    "SELECT id, code, name, parent_id, approver_email FROM org_departments WHERE org_id = $1 AND removed_at IS NULL",
    [orgId],
  );
}

const approvers = (rows: DepartmentWrite[]) => rows.map((r) => ({ ...r, value: r.approverEmail }));

/** One INSERT for all new departments (the core's chart writes, which the suite's mirror shares). */
export async function insertDepartments(q: Queryable, orgId: string, rows: DepartmentWrite[]): Promise<void> {
  await insertChartRows(q, orgId, "approver_email", approvers(rows));
}

/** The live departments a sync changes (chartOf lists no tombstoned one, so none comes back here). */
export async function updateDepartments(q: Queryable, orgId: string, rows: DepartmentWrite[]): Promise<void> {
  await updateChartRows(q, orgId, "approver_email", approvers(rows), { revive: false });
}

/** Deletes departments; their members' department becomes null (ON DELETE SET NULL), as do their children's parent. */
export async function deleteDepartments(q: Queryable, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await q.query("DELETE FROM org_departments WHERE org_id = $1 AND id = ANY($2::uuid[])", [orgId, ids]);
}

/** Moves a department's children under another parent (null: roots); returns how many moved. */
export async function reparentChildren(q: Queryable, id: string, parentId: string | null): Promise<number> {
  const { rowCount } = await q.query(
    "UPDATE org_departments SET parent_id = $2, updated_at = now() WHERE parent_id = $1",
    [id, parentId],
  );
  return rowCount ?? 0;
}

export async function setDeployBlocked(q: Queryable, id: string, blocked: boolean): Promise<void> {
  await q.query(
    "UPDATE org_departments SET deploy_blocked = $2, updated_at = now() WHERE id = $1 AND deploy_blocked <> $2",
    [id, blocked],
  );
}

/**
 * The deploy block that applies to a department: its own or its nearest blocked ancestor's (code), or null.
 * Exported for the creation-path checks (the department of the acting member).
 */
export async function deployBlockOf(q: Queryable, departmentId: string): Promise<{ code: string } | null> {
  const { rows } = await q.query<{ code: string }>({
    name: "org-department-deploy-block",
    text: `WITH RECURSIVE up AS (
             SELECT id, parent_id, code, deploy_blocked, 0 AS depth FROM org_departments WHERE id = $1
             UNION ALL
             SELECT p.id, p.parent_id, p.code, p.deploy_blocked, up.depth + 1
               FROM org_departments p JOIN up ON p.id = up.parent_id
              WHERE up.depth < 10000
           )
           SELECT code FROM up WHERE deploy_blocked ORDER BY depth LIMIT 1`,
    values: [departmentId],
  });
  return rows[0] ?? null;
}

export async function countMembersIn(q: Queryable, departmentId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM org_members WHERE department_id = $1", [
    departmentId,
  ]);
  return rows[0].n;
}

/** A member as the member sync compares it (e-mail as stored: normalized at sign-up). */
export interface MemberState {
  account_id: string;
  email: string;
  role: OrgRole;
  department_id: string | null;
}

export async function memberStates(q: Queryable, orgId: string): Promise<MemberState[]> {
  return allRows<MemberState>(
    q,
    `SELECT m.account_id, a.email, m.role, m.department_id
       FROM org_members m JOIN accounts a ON a.id = m.account_id
      WHERE m.org_id = $1`,
    [orgId],
  );
}

export interface MemberWrite {
  accountId: string;
  role: "admin" | "member";
  departmentId: string | null;
}

/** One UPDATE for every changed member; the owner's row is never among them (checked again here). */
export async function updateMembers(q: Queryable, orgId: string, rows: MemberWrite[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE org_members m SET role = u.role, department_id = u.department_id
       FROM unnest($2::uuid[], $3::text[], $4::uuid[]) AS u(account_id, role, department_id)
      WHERE m.org_id = $1 AND m.account_id = u.account_id AND m.role <> 'owner'`,
    [orgId, rows.map((r) => r.accountId), rows.map((r) => r.role), rows.map((r) => r.departmentId)],
  );
}
