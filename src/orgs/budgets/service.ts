import { randomUUID } from "node:crypto";
import { isUuid, type Db } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { Kernel } from "../../kernel/kernel.js";
import { roleAtLeast, type OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, found, notFound } from "../../http/errors.js";
import { departmentChain } from "../public.js";
import { consumedKrw, monthRange } from "./consumption.js";
import * as repo from "./repo.js";

export interface BudgetInput {
  scope: repo.BudgetScope;
  department_code?: string;
  department_id?: string;
  member_id?: string;
  email?: string;
  amount_krw: number;
  mode: repo.BudgetMode;
}

export interface BudgetsDeps {
  db: Db;
  kernel: Pick<Kernel, "use">;
  now?: () => Date;
}

/** Monthly budgets of an organization with this month's consumption (GET), set per target (PUT), deleted. */
export function budgetsService(d: BudgetsDeps) {
  const { db, kernel } = d;
  const now = d.now ?? (() => new Date());

  async function withConsumption(rows: repo.BudgetRow[]) {
    const range = monthRange(now());
    const out = [];
    for (const b of rows) {
      const consumed = await consumedKrw(db, kernel.use("usageTotals"), b, range);
      out.push({ ...b, month: range.label, consumed_krw: consumed });
    }
    return out;
  }

  /** the department or member a PUT names, within the organization (400 when it names none or another's) */
  async function target(m: OrgMembership, input: BudgetInput) {
    const has = { dept: !!(input.department_code || input.department_id), member: !!(input.member_id || input.email) };
    if (input.scope === "company") {
      if (has.dept || has.member)
        throw new ApiError("invalid_request", "A company budget names no department and no member.");
      return { departmentId: null, accountId: null };
    }
    if (input.scope === "department") {
      if (!has.dept || has.member)
        throw new ApiError("invalid_request", "A department budget names department_code or department_id (only).");
      const dept = await repo.departmentByRef(db, m.orgId, { id: input.department_id, code: input.department_code });
      if (!dept)
        throw new ApiError(
          "unknown_department",
          `No department ${input.department_code ?? input.department_id} in the organization.`,
        );
      return { departmentId: dept.id, accountId: null };
    }
    if (!has.member || has.dept)
      throw new ApiError("invalid_request", "A member budget names member_id or email (only).");
    const member = await repo.memberByRef(db, m.orgId, { id: input.member_id, email: input.email });
    if (!member)
      throw new ApiError("invalid_request", `${input.member_id ?? input.email} is not a member of the organization.`);
    return { departmentId: null, accountId: member.account_id };
  }

  return {
    /** admins see every budget; members the ones that apply to them (company, their departments, their own) */
    async list(m: OrgMembership, accountId: string) {
      if (roleAtLeast(m.role, "admin")) return withConsumption(await repo.listBudgets(db, m.orgId));
      const chain = m.departmentId ? await departmentChain(db, m.departmentId) : [];
      const mine = await repo.applicableBudgets(
        db,
        m.orgId,
        accountId,
        chain.map((c) => c.id),
        null,
      );
      return withConsumption(mine);
    },

    async put(p: Principal, m: OrgMembership, input: BudgetInput) {
      const t = await target(m, input);
      const saved = await auditedTransaction(db, p, (tx) =>
        repo.upsertBudget(
          tx,
          { id: randomUUID(), orgId: m.orgId, scope: input.scope, ...t },
          input.amount_krw,
          input.mode,
        ),
      );
      const row = found(await repo.findBudget(db, m.orgId, saved.id), "budget");
      return { budget: (await withConsumption([row]))[0], created: saved.inserted };
    },

    async remove(p: Principal, m: OrgMembership, id: string) {
      if (!isUuid(id)) throw notFound("budget");
      const gone = await auditedTransaction(db, p, async (tx) => {
        const row = found(await repo.findBudget(tx, m.orgId, id), "budget");
        await repo.deleteBudget(tx, m.orgId, id);
        return row;
      });
      return { deleted: true, id: gone.id };
    },
  };
}

export type BudgetsService = ReturnType<typeof budgetsService>;
