import type { Queryable } from "../../store/db.js";
import type { AdmissionCheck, AdmissionRequest } from "../../kernel/contracts.js";
import { ApiError } from "../../http/errors.js";
import * as orgs from "../public.js";
import { targetOf, violation } from "./check.js";
import * as repo from "./repo.js";

/**
 * The department deploy block of the acting member: their department or any ancestor with deploy_blocked stops
 * new deployments and code updates (403 deploy_rule_violation naming the department that set it).
 */
async function deployBlock(q: Queryable, r: AdmissionRequest): Promise<void> {
  const m = await orgs.membership(q, r.accountId);
  if (!m || m.orgId !== r.owner.id || !m.departmentId) return;
  const chain = await orgs.departmentChain(q, m.departmentId);
  const blocked = chain.find((d) => d.deploy_blocked);
  if (!blocked) return;
  const inherited = blocked.id === chain[0].id ? "" : `, inherited by its sub-department ${chain[0].code}`;
  throw new ApiError(
    "deploy_rule_violation",
    `Department ${blocked.code} (${blocked.name}) has deploy_blocked set${inherited}: new deployments and code updates by its members are stopped; running resources continue.`,
  );
}

/**
 * Deploy rules and department deploy blocks at admission (kernel.admit), for requests in the company context
 * (owner kind org): creations, updates (`update`: a new deployment or code change) and resizes. Growth of an app
 * and the replicas of a pod group (`partOf`) were judged with the app's own request, so they pass here.
 */
export function rulesAdmission(): AdmissionCheck {
  return async (q, r) => {
    if (r.owner.kind !== "org" || r.growth || r.partOf) return;
    await deployBlock(q, r);
    const stored = await repo.rulesOf(q, r.owner.id);
    const broken = stored && violation(stored.rules, targetOf(r));
    if (broken) throw new ApiError("deploy_rule_violation", broken);
  };
}
