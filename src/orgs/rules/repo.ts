/** SQL of deploy rules (orgs.deploy_rules); the department tree they walk is the core's (../public.ts). */
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
