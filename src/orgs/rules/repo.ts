/** SQL of deploy rules (orgs.deploy_rules) and the department tree as rules and budgets walk it. */
import type { Queryable } from "../../store/db.js";
import type { DeployRules } from "./schema.js";

export async function rulesOf(q: Queryable, orgId: string): Promise<{ rules: DeployRules; updatedAt: Date } | null> {
  const { rows } = await q.query<{ deploy_rules: DeployRules; updated_at: Date }>({
    name: "org-deploy-rules",
    text: "SELECT deploy_rules, updated_at FROM orgs WHERE id = $1",
    values: [orgId],
  });
  return rows[0] ? { rules: rows[0].deploy_rules ?? {}, updatedAt: rows[0].updated_at } : null;
}

export async function setRules(q: Queryable, orgId: string, rules: DeployRules): Promise<Date | null> {
  const { rows } = await q.query<{ updated_at: Date }>(
    "UPDATE orgs SET deploy_rules = $2, updated_at = now() WHERE id = $1 RETURNING updated_at",
    [orgId, JSON.stringify(rules)],
  );
  return rows[0]?.updated_at ?? null;
}

export interface DepartmentLink {
  id: string;
  code: string;
  name: string;
  deploy_blocked: boolean;
}

/** A department and its ancestors, nearest first (bounded, so a cycle cannot loop). */
export async function departmentChain(q: Queryable, departmentId: string): Promise<DepartmentLink[]> {
  const { rows } = await q.query<DepartmentLink>({
    name: "org-department-chain",
    text: `WITH RECURSIVE chain AS (
             SELECT id, parent_id, code, name, deploy_blocked, 0 AS depth FROM org_departments WHERE id = $1
             UNION ALL
             SELECT d.id, d.parent_id, d.code, d.name, d.deploy_blocked, c.depth + 1
               FROM org_departments d JOIN chain c ON d.id = c.parent_id WHERE c.depth < 64)
           SELECT id, code, name, deploy_blocked FROM chain ORDER BY depth`,
    values: [departmentId],
  });
  return rows;
}

/** Members of a department and of every department under it (bounded depth). */
export async function membersUnder(q: Queryable, departmentId: string): Promise<string[]> {
  const { rows } = await q.query<{ account_id: string }>({
    name: "org-members-under",
    text: `WITH RECURSIVE tree AS (
             SELECT id, 0 AS depth FROM org_departments WHERE id = $1
             UNION
             SELECT d.id, t.depth + 1 FROM org_departments d JOIN tree t ON d.parent_id = t.id WHERE t.depth < 64)
           SELECT DISTINCT m.account_id FROM org_members m JOIN tree t ON m.department_id = t.id`,
    values: [departmentId],
  });
  return rows.map((r) => r.account_id);
}
