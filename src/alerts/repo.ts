import { allRows, allValues, oneRow, returnedRow, type Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { finderOf, listerOf, type RefLookup } from "../store/find.js";
import type { AlertState } from "./transition.js";
import type { ResourceKind } from "./figures.js";

export interface RuleRow {
  id: string;
  owner_kind: Owner["kind"];
  owner_id: string;
  account_id: string;
  name: string;
  resource_kind: ResourceKind | null;
  resource_id: string | null;
  metric: string;
  comparison: ">" | ">=" | "<" | "<=";
  threshold: number;
  window_minutes: number;
  for_minutes: number;
  enabled: boolean;
  notify_email: string;
  state: AlertState;
  state_since: Date;
  clearing_since: Date | null;
  last_value: number | null;
  last_evaluated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface FiringRow {
  id: string;
  rule_id: string;
  fired_at: Date;
  fired_value: number | null;
  resolved_at: Date | null;
  resolved_value: number | null;
  resolved_reason: string | null;
}

/** Firings kept per rule (older ones are pruned when a rule fires). */
export const FIRINGS_KEPT = 100;

export type RuleFields = Pick<
  RuleRow,
  | "name"
  | "resource_kind"
  | "resource_id"
  | "metric"
  | "comparison"
  | "threshold"
  | "window_minutes"
  | "for_minutes"
  | "enabled"
>;

export async function insertRule(
  q: Queryable,
  r: RuleFields & { id: string; owner: Owner; account_id: string; notify_email: string },
): Promise<RuleRow> {
  return returnedRow<RuleRow>(
    q,
    `INSERT INTO alert_rules (id, owner_kind, owner_id, account_id, name, resource_kind, resource_id, metric,
                              comparison, threshold, window_minutes, for_minutes, enabled, notify_email)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
    [
      r.id,
      r.owner.kind,
      r.owner.id,
      r.account_id,
      r.name,
      r.resource_kind,
      r.resource_id,
      r.metric,
      r.comparison,
      r.threshold,
      r.window_minutes,
      r.for_minutes,
      r.enabled,
      r.notify_email,
    ],
  );
}

/** alert_rules as the shared lookups read it: found by id or name */
const RULES: RefLookup = { table: "alert_rules", refColumn: "name" };

/** One of the owner's rules by id or name. */
export const findRule = finderOf<RuleRow>(RULES);

export const listRules = listerOf<RuleRow>(RULES, "created_at, id");

/** Writes the changed definition; with `reset` the state goes back to ok (a changed condition counts afresh). */
export async function updateRule(q: Queryable, id: string, f: RuleFields, reset: boolean): Promise<RuleRow> {
  return returnedRow<RuleRow>(
    q,
    `UPDATE alert_rules SET name = $2, resource_kind = $3, resource_id = $4, metric = $5, comparison = $6,
            threshold = $7, window_minutes = $8, for_minutes = $9, enabled = $10, updated_at = now()
            ${reset ? ", state = 'ok', state_since = now(), clearing_since = NULL, last_value = NULL, last_evaluated_at = NULL" : ""}
      WHERE id = $1 RETURNING *`,
    [
      id,
      f.name,
      f.resource_kind,
      f.resource_id,
      f.metric,
      f.comparison,
      f.threshold,
      f.window_minutes,
      f.for_minutes,
      f.enabled,
    ],
  );
}

export async function deleteRule(q: Queryable, id: string): Promise<void> {
  await q.query("DELETE FROM alert_rules WHERE id = $1", [id]);
}

/** Ids of the enabled rules, for one evaluation pass. */
export async function enabledRuleIds(q: Queryable): Promise<string[]> {
  return allValues<string>(q, "id", "SELECT id::text FROM alert_rules WHERE enabled ORDER BY id");
}

/** One rule locked for its evaluation; null when it went or another evaluator holds it (it evaluates it then). */
export async function lockRule(q: Queryable, id: string): Promise<RuleRow | null> {
  return oneRow<RuleRow>(q, "SELECT * FROM alert_rules WHERE id = $1 AND enabled FOR UPDATE SKIP LOCKED", [id]);
}

export async function saveEvaluation(
  q: Queryable,
  id: string,
  e: { state: AlertState; state_since: Date; clearing_since: Date | null; last_value: number | null; at: Date },
): Promise<RuleRow> {
  return returnedRow<RuleRow>(
    q,
    `UPDATE alert_rules SET state = $2, state_since = $3, clearing_since = $4, last_value = $5, last_evaluated_at = $6
      WHERE id = $1 RETURNING *`,
    [id, e.state, e.state_since, e.clearing_since, e.last_value, e.at],
  );
}

/** A new firing; firings beyond the newest FIRINGS_KEPT of the rule go. */
export async function insertFiring(
  q: Queryable,
  f: { id: string; rule_id: string; fired_at: Date; fired_value: number | null },
): Promise<FiringRow> {
  const firing = await returnedRow<FiringRow>(
    q,
    `INSERT INTO alert_firings (id, rule_id, fired_at, fired_value) VALUES ($1, $2, $3, $4) RETURNING *`,
    [f.id, f.rule_id, f.fired_at, f.fired_value],
  );
  await q.query(
    `DELETE FROM alert_firings WHERE rule_id = $1 AND id NOT IN
       (SELECT id FROM alert_firings WHERE rule_id = $1 ORDER BY fired_at DESC, id LIMIT $2)`,
    [f.rule_id, FIRINGS_KEPT],
  );
  return firing;
}

/** Closes the rule's open firing (there is at most one); null when none is open. */
export async function resolveFiring(
  q: Queryable,
  ruleId: string,
  r: { at: Date; value: number | null; reason: string },
): Promise<FiringRow | null> {
  return oneRow<FiringRow>(
    q,
    `UPDATE alert_firings SET resolved_at = $2, resolved_value = $3, resolved_reason = $4
      WHERE rule_id = $1 AND resolved_at IS NULL RETURNING *`,
    [ruleId, r.at, r.value, r.reason],
  );
}

export async function listFirings(q: Queryable, ruleId: string, limit: number): Promise<FiringRow[]> {
  return allRows<FiringRow>(q, "SELECT * FROM alert_firings WHERE rule_id = $1 ORDER BY fired_at DESC, id LIMIT $2", [
    ruleId,
    limit,
  ]);
}
