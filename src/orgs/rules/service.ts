import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { summarize, validateRules } from "./check.js";
import * as repo from "./repo.js";
import type { DeployRules } from "./schema.js";

const view = (rules: DeployRules, updatedAt: Date) => ({
  rules,
  summary: rules.summary ?? summarize(rules),
  summary_generated: rules.summary === undefined,
  updated_at: updatedAt.toISOString(),
});

/** The organization's deploy rules: read by every member (agents read the summary), replaced by admins. */
export function rulesService(db: Db) {
  return {
    async get(m: OrgMembership) {
      const stored = await repo.rulesOf(db, m.orgId);
      if (!stored) throw new ApiError("not_found", "The organization no longer exists.");
      return view(stored.rules, stored.updatedAt);
    },

    /** PUT replaces the whole document; `{}` lifts every rule. */
    async put(p: Principal, m: OrgMembership, rules: DeployRules) {
      validateRules(rules);
      const updatedAt = await auditedTransaction(db, p, (tx) => repo.setRules(tx, m.orgId, rules));
      if (!updatedAt) throw new ApiError("not_found", "The organization no longer exists.");
      return view(rules, updatedAt);
    },
  };
}

export type RulesService = ReturnType<typeof rulesService>;
