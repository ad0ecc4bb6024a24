/**
 * The partner's department chart (README.md, "Departments"): replaced whole by PUT /v1/partner/departments with a
 * per-item result, and a per-department policy (concurrent-run limit, deploy block) enforced at admission.
 */
import type { Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { found } from "../../http/errors.js";
import type { PartnerRow } from "../repo.js";
import { unassignDepartments } from "../children/repo.js";
import { planChart, validateChart, type ChartItem } from "./plan.js";
import * as repo from "./repo.js";

export function departmentsService({ db }: { db: Db }) {
  const list = (partner: PartnerRow) => repo.listDepartments(db, partner.account_id);

  /**
   * Replaces the chart: inserts new codes, updates changed parents or names, skips unchanged ones and deletes codes
   * not pushed (their children become unassigned; policies of kept codes stay). Idempotent: the same push again
   * answers skip for every item. A parent not in the push or a cycle refuses the whole push (400).
   */
  async function replace(p: Principal, partner: PartnerRow, items: ChartItem[]) {
    validateChart(items);
    return auditedTransaction(db, p, async (tx) => {
      await repo.lockChart(tx, partner.account_id);
      const current = await repo.listDepartments(tx, partner.account_id);
      const plan = planChart(current, items);
      const byCode = new Map(items.map((d) => [d.code, d]));
      for (const step of plan) {
        if (step.result === "insert" || step.result === "update")
          await repo.upsertDepartment(tx, partner.account_id, byCode.get(step.code)!);
      }
      const deleted = plan.filter((s) => s.result === "delete").map((s) => s.code);
      await unassignDepartments(tx, partner.account_id, deleted);
      await repo.deleteDepartments(tx, partner.account_id, deleted);
      return { items: plan };
    });
  }

  async function setPolicy(
    p: Principal,
    partner: PartnerRow,
    code: string,
    policy: { max_running: number | null; deploy_blocked: boolean },
  ) {
    return auditedTransaction(db, p, async (tx) => {
      return found(await repo.setPolicy(tx, partner.account_id, code, policy), "department");
    });
  }

  return { list, replace, setPolicy };
}

export type DepartmentsService = ReturnType<typeof departmentsService>;
