/** SQL of organization budgets (org_budgets) and their warn alerts (org_budget_alerts). */
import { allRows, anyRows, oneRow, type Queryable } from "../../store/db.js";

export type BudgetScope = "company" | "department" | "member";
export type BudgetMode = "warn" | "block";

export interface BudgetRow {
  id: string;
  org_id: string;
  scope: BudgetScope;
  department_id: string | null;
  department_code: string | null;
  department_name: string | null;
  account_id: string | null;
  email: string | null;
  amount_krw: number;
  mode: BudgetMode;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT b.id, b.org_id, b.scope, b.department_id, d.code AS department_code, d.name AS department_name,
         b.account_id, a.email, b.amount_krw, b.mode, b.created_at, b.updated_at
    FROM org_budgets b LEFT JOIN org_departments d ON d.id = b.department_id LEFT JOIN accounts a ON a.id = b.account_id`;
const ORDER = "ORDER BY array_position(ARRAY['company','department','member'], b.scope), d.code, a.email";

export async function listBudgets(q: Queryable, orgId: string): Promise<BudgetRow[]> {
  return allRows<BudgetRow>(q, `${SELECT} WHERE b.org_id = $1 ${ORDER}`, [orgId]);
}

export async function findBudget(q: Queryable, orgId: string, id: string): Promise<BudgetRow | null> {
  return oneRow<BudgetRow>(q, `${SELECT} WHERE b.org_id = $1 AND b.id = $2`, [orgId, id]);
}

/**
 * The block budgets that apply to a member acting for the organization: the company's, those of the departments in
 * `departmentIds` (the member's and its ancestors) and the member's own.
 */
export async function applicableBudgets(
  q: Queryable,
  orgId: string,
  accountId: string,
  departmentIds: string[],
  mode: BudgetMode | null,
): Promise<BudgetRow[]> {
  return allRows<BudgetRow>(
    q,
    `${SELECT} WHERE b.org_id = $1 AND ($4::text IS NULL OR b.mode = $4)
        AND (b.scope = 'company' OR b.account_id = $2 OR b.department_id = ANY($3::uuid[])) ${ORDER}`,
    [orgId, accountId, departmentIds, mode],
  );
}

/** One budget per target (org_budgets_one_per_target): a second PUT for the same target changes it. */
export async function upsertBudget(
  q: Queryable,
  b: { id: string; orgId: string; scope: BudgetScope; departmentId: string | null; accountId: string | null },
  amountKrw: number,
  mode: BudgetMode,
): Promise<{ id: string; inserted: boolean }> {
  const { rows } = await q.query<{ id: string; inserted: boolean }>(
    `INSERT INTO org_budgets (id, org_id, scope, department_id, account_id, amount_krw, mode)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (org_id, scope, coalesce(department_id, '00000000-0000-0000-0000-000000000000'),
                  coalesce(account_id, '00000000-0000-0000-0000-000000000000'))
     DO UPDATE SET amount_krw = EXCLUDED.amount_krw, mode = EXCLUDED.mode, updated_at = now()
     RETURNING id, (xmax = 0) AS inserted`,
    [b.id, b.orgId, b.scope, b.departmentId, b.accountId, amountKrw, mode],
  );
  return rows[0];
}

export async function deleteBudget(q: Queryable, orgId: string, id: string): Promise<boolean> {
  return anyRows(q, "DELETE FROM org_budgets WHERE org_id = $1 AND id = $2", [orgId, id]);
}

export async function departmentByRef(
  q: Queryable,
  orgId: string,
  ref: { id?: string; code?: string },
): Promise<{ id: string; code: string } | null> {
  return oneRow<{ id: string; code: string }>(
    q,
    `SELECT id, code FROM org_departments WHERE org_id = $1 AND removed_at IS NULL
        AND (($2::text IS NOT NULL AND id::text = $2) OR ($3::text IS NOT NULL AND code = $3))`,
    [orgId, ref.id ?? null, ref.code ?? null],
  );
}

export async function memberByRef(
  q: Queryable,
  orgId: string,
  ref: { id?: string; email?: string },
): Promise<{ account_id: string } | null> {
  return oneRow<{ account_id: string }>(
    q,
    `SELECT m.account_id FROM org_members m JOIN accounts a ON a.id = m.account_id WHERE m.org_id = $1
        AND (($2::text IS NOT NULL AND m.account_id::text = $2) OR ($3::text IS NOT NULL AND lower(a.email) = lower($3)))`,
    [orgId, ref.id ?? null, ref.email ?? null],
  );
}

// ---- warn alerts

/** Warn budgets of every organization that have not had their 100% alert for the month yet. */
export async function warnBudgetsPending(q: Queryable, month: Date): Promise<BudgetRow[]> {
  return allRows<BudgetRow>(
    q,
    `${SELECT} WHERE b.mode = 'warn' AND NOT EXISTS (
        SELECT 1 FROM org_budget_alerts x WHERE x.budget_id = b.id AND x.month = $1 AND x.threshold = 100)
      ORDER BY b.org_id, b.id`,
    [month],
  );
}

/** Claims the alerts of thresholds not sent yet this month; returns the thresholds claimed now. */
export async function claimAlerts(q: Queryable, budgetId: string, month: Date, thresholds: number[]) {
  const { rows } = await q.query<{ threshold: number }>(
    `INSERT INTO org_budget_alerts (budget_id, month, threshold) SELECT $1, $2, t FROM unnest($3::int[]) AS t
     ON CONFLICT DO NOTHING RETURNING threshold`,
    [budgetId, month, thresholds],
  );
  return rows.map((r) => r.threshold);
}

/** Gives claimed alerts back when their mail could not be sent, so the next run tries again. */
export async function releaseAlerts(q: Queryable, budgetId: string, month: Date, thresholds: number[]) {
  await q.query("DELETE FROM org_budget_alerts WHERE budget_id = $1 AND month = $2 AND threshold = ANY($3::int[])", [
    budgetId,
    month,
    thresholds,
  ]);
}

/** E-mail addresses of the organization's owner and admins. */
export async function adminEmails(q: Queryable, orgId: string): Promise<string[]> {
  const { rows } = await q.query<{ email: string }>(
    `SELECT a.email FROM org_members m JOIN accounts a ON a.id = m.account_id
      WHERE m.org_id = $1 AND m.role IN ('owner', 'admin') ORDER BY m.role DESC, a.email`,
    [orgId],
  );
  return rows.map((r) => r.email);
}

export async function orgName(q: Queryable, orgId: string): Promise<string | null> {
  const { rows } = await q.query<{ name: string }>("SELECT name FROM orgs WHERE id = $1", [orgId]);
  return rows[0]?.name ?? null;
}
