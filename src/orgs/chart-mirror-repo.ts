/**
 * An outside organization chart mirrored onto the organization's departments (the suite's directory, src/suite):
 * departments matched on the outside unit id (`suite_unit_id`, migration 048), tombstoned (`removed_at`) rather than
 * deleted when the outside chart drops them, and members' departments set from their units. The SQL of these tables
 * stays here, with the organizations that own them; the suite plans the change and calls these through public.ts.
 * Bulk writes are one statement over unnest()ed arrays.
 */
import { allRows, type Queryable } from "../store/db.js";

/** A department as the mirror sees it, tombstoned ones included. */
export interface MirrorRow {
  id: string;
  code: string;
  name: string;
  parent_id: string | null;
  suite_unit_id: string | null;
  removed_at: Date | null;
}

/** A department to insert or update from the outside chart. */
export interface MirrorWrite {
  id: string;
  code: string;
  name: string;
  parentId: string | null;
  unitId: string;
}

/**
 * Serializes the changes of one organization's chart and its member syncs (the HR syncs of src/orgs/departments and
 * the suite's mirror), so a sync computes its differences over a state nobody else changes until it commits.
 */
export async function lockChart(q: Queryable, orgId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-chart:' || $1))", [orgId]);
}

/** Every department of the organization, tombstoned ones included (a unit listed again comes back). */
export async function mirrorRows(q: Queryable, orgId: string): Promise<MirrorRow[]> {
  return allRows<MirrorRow>(
    q,
    "SELECT id, code, name, parent_id, suite_unit_id, removed_at FROM org_departments WHERE org_id = $1",
    [orgId],
  );
}

/**
 * The one column of a department besides code, name and parent that a source of the chart owns: the approver of the
 * HR syncs (src/orgs/departments), the outside unit of the suite's mirror.
 */
export type ChartSourceColumn = "approver_email" | "suite_unit_id";

/** A department as a source of the chart writes it, with the value of its own column. */
export interface ChartWrite {
  id: string;
  code: string;
  name: string;
  parentId: string | null;
  value: string | null;
}

const columns = (rows: ChartWrite[]) => [
  rows.map((r) => r.id),
  rows.map((r) => r.code),
  rows.map((r) => r.name),
  rows.map((r) => r.parentId),
  rows.map((r) => r.value),
];

/** One INSERT for all new departments (parents first; the foreign key is checked at the statement's end anyway). */
export async function insertChartRows(
  q: Queryable,
  orgId: string,
  column: ChartSourceColumn,
  rows: ChartWrite[],
): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `INSERT INTO org_departments (id, org_id, code, name, parent_id, ${column})
     SELECT u.id, $1, u.code, u.name, u.parent_id, u.value
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[])
            WITH ORDINALITY AS u(id, code, name, parent_id, value, n)
      ORDER BY u.n`,
    [orgId, ...columns(rows)],
  );
}

/** Name, parent and the source's column as the source says; `revive`: a tombstoned department comes back. */
export async function updateChartRows(
  q: Queryable,
  orgId: string,
  column: ChartSourceColumn,
  rows: ChartWrite[],
  opts: { revive: boolean },
): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE org_departments d
        SET name = u.name, parent_id = u.parent_id, ${column} = u.value,${opts.revive ? " removed_at = NULL," : ""}
            updated_at = now()
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[])
            AS u(id, code, name, parent_id, value)
      WHERE d.org_id = $1 AND d.id = u.id`,
    [orgId, ...columns(rows)],
  );
}

const mirrored = (rows: MirrorWrite[]): ChartWrite[] => rows.map((r) => ({ ...r, value: r.unitId }));

export async function insertMirrored(q: Queryable, orgId: string, rows: MirrorWrite[]): Promise<void> {
  await insertChartRows(q, orgId, "suite_unit_id", mirrored(rows));
}

/** Name, parent and unit as the suite says; a tombstoned department comes back. */
export async function updateMirrored(q: Queryable, orgId: string, rows: MirrorWrite[]): Promise<void> {
  await updateChartRows(q, orgId, "suite_unit_id", mirrored(rows), { revive: true });
}

export async function tombstoneDepartments(q: Queryable, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await q.query(
    "UPDATE org_departments SET removed_at = now(), updated_at = now() WHERE org_id = $1 AND id = ANY($2::uuid[])",
    [orgId, ids],
  );
}

export async function releaseDepartmentUnits(q: Queryable, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await q.query("UPDATE org_departments SET suite_unit_id = NULL WHERE org_id = $1 AND id = ANY($2::uuid[])", [
    orgId,
    ids,
  ]);
}

export async function departmentOfUnits(q: Queryable, orgId: string, unitIds: string[]): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM org_departments
      WHERE org_id = $1 AND suite_unit_id = ANY($2::text[]) AND removed_at IS NULL
      ORDER BY array_position($2::text[], suite_unit_id) LIMIT 1`,
    [orgId, unitIds],
  );
  return rows[0]?.id ?? null;
}

export async function setMemberDepartments(
  q: Queryable,
  orgId: string,
  rows: { accountId: string; departmentId: string | null }[],
): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE org_members m SET department_id = u.department_id
       FROM unnest($2::uuid[], $3::uuid[]) AS u(account_id, department_id)
      WHERE m.org_id = $1 AND m.account_id = u.account_id`,
    [orgId, rows.map((r) => r.accountId), rows.map((r) => r.departmentId)],
  );
}
