/** SQL of partner children (partner_children): a partner's end users, owners of kind partner_child. */
import { randomUUID } from "node:crypto";
import { allRows, allValues, countOf, oneRow, returnedRow, type Queryable } from "../../store/db.js";
import { patchParams } from "../../store/patch.js";

export interface ChildRow {
  id: string;
  partner_id: string;
  external_ref: string;
  department_code: string | null;
  tenant_ref: string | null;
  monthly_cap_krw: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = "id, partner_id, external_ref, department_code, tenant_ref, monthly_cap_krw, created_at, updated_at";

/** Inserts a child unless a live one has the external_ref; `created` false answers the existing one. */
export async function insertOrFind(
  q: Queryable,
  c: Omit<ChildRow, "id" | "created_at" | "updated_at">,
): Promise<{ row: ChildRow; created: boolean }> {
  const inserted = await q.query<ChildRow>(
    `INSERT INTO partner_children (id, partner_id, external_ref, department_code, tenant_ref, monthly_cap_krw)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (partner_id, external_ref) WHERE deleted_at IS NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    [randomUUID(), c.partner_id, c.external_ref, c.department_code, c.tenant_ref, c.monthly_cap_krw],
  );
  if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
  const { rows } = await q.query<ChildRow>(
    `SELECT ${COLUMNS} FROM partner_children WHERE partner_id = $1 AND external_ref = $2 AND deleted_at IS NULL`,
    [c.partner_id, c.external_ref],
  );
  return { row: rows[0], created: false };
}

export async function findChild(
  q: Queryable,
  partnerId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<ChildRow | null> {
  return oneRow<ChildRow>(
    q,
    `SELECT ${COLUMNS} FROM partner_children WHERE partner_id = $1 AND id = $2 AND deleted_at IS NULL${opts.forUpdate ? " FOR UPDATE" : ""}`,
    [partnerId, id],
  );
}

/** A live child by id whoever its partner is (admission, public.ts). */
export async function childById(q: Queryable, id: string): Promise<ChildRow | null> {
  return oneRow<ChildRow>(q, `SELECT ${COLUMNS} FROM partner_children WHERE id = $1 AND deleted_at IS NULL`, [id]);
}

/** A page of live children, oldest first, after the child `after` (keyset on created_at, id at full precision). */
export async function listChildren(
  q: Queryable,
  partnerId: string,
  page: { after: string | null; limit: number },
): Promise<ChildRow[]> {
  return allRows<ChildRow>(
    q,
    `SELECT ${COLUMNS} FROM partner_children
      WHERE partner_id = $1 AND deleted_at IS NULL
        AND ($2::uuid IS NULL OR (created_at, id) > (SELECT created_at, id FROM partner_children WHERE id = $2))
      ORDER BY created_at, id LIMIT $3`,
    [partnerId, page.after, page.limit],
  );
}

export async function countChildren(q: Queryable, partnerId: string): Promise<number> {
  return countOf(q, "SELECT count(*)::int AS n FROM partner_children WHERE partner_id = $1 AND deleted_at IS NULL", [
    partnerId,
  ]);
}

export async function childIdsOf(q: Queryable, partnerId: string): Promise<string[]> {
  return allValues<string>(q, "id", "SELECT id FROM partner_children WHERE partner_id = $1 AND deleted_at IS NULL", [
    partnerId,
  ]);
}

/** Live children whose department is one of `codes`. */
export async function childIdsIn(q: Queryable, partnerId: string, codes: string[]): Promise<string[]> {
  return allValues<string>(
    q,
    "id",
    "SELECT id FROM partner_children WHERE partner_id = $1 AND department_code = ANY($2::text[]) AND deleted_at IS NULL",
    [partnerId, codes],
  );
}

export async function updateChild(
  q: Queryable,
  id: string,
  v: { department_code?: string | null; tenant_ref?: string | null; monthly_cap_krw?: number | null },
): Promise<ChildRow> {
  return returnedRow<ChildRow>(
    q,
    `UPDATE partner_children SET
       department_code = CASE WHEN $2 THEN $3 ELSE department_code END,
       tenant_ref = CASE WHEN $4 THEN $5 ELSE tenant_ref END,
       monthly_cap_krw = CASE WHEN $6 THEN $7::bigint ELSE monthly_cap_krw END,
       updated_at = now()
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, ...patchParams(v, ["department_code", "tenant_ref", "monthly_cap_krw"])],
  );
}

export async function markDeleted(q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE partner_children SET deleted_at = now(), updated_at = now() WHERE id = $1", [id]);
}

/** Children of departments that no longer exist become unassigned (the chart push deleted them). */
export async function unassignDepartments(q: Queryable, partnerId: string, codes: string[]): Promise<void> {
  if (!codes.length) return;
  await q.query(
    `UPDATE partner_children SET department_code = NULL, updated_at = now()
      WHERE partner_id = $1 AND department_code = ANY($2::text[]) AND deleted_at IS NULL`,
    [partnerId, codes],
  );
}

/** The child's sites under a partner lock (access/, migration 044): they stay closed when the child goes (045). */
export async function lockedSiteIds(q: Queryable, childId: string): Promise<Set<string>> {
  return new Set(
    await allValues<string>(q, "site_id", "SELECT site_id FROM partner_site_locks WHERE child_id = $1", [childId]),
  );
}
