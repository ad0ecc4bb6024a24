import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { normaliseEmail } from "../../auth/secrets.js";
import * as orgs from "../public.js";
import { removeFromOrg, type ChangeDeps } from "../public.js";
import * as repo from "./repo.js";
import { countResults, planDepartments, type DepartmentInput, type PlanOptions } from "./plan.js";
import { MEMBER_RESULTS, planMembers, type MemberInput } from "./member-plan.js";
import { departmentsCsv, membersCsv } from "./csv.js";

export interface ChartDeps extends ChangeDeps {
  db: Db;
}

export const DEPARTMENT_RESULTS = ["insert", "update", "skip", "delete"] as const;

/** A department with the deploy block that applies to it: its own or its nearest blocked ancestor's. */
export interface DepartmentState extends repo.DepartmentRow {
  blocked_by: string | null;
}

/** A department as JSON gives it (sync items, PUT): omitted parent_code and approver_email are none. */
export interface DepartmentJson {
  code: string;
  name: string;
  parent_code?: string | null;
  approver_email?: string | null;
}

const fromJson = (d: DepartmentJson): DepartmentInput => ({
  code: d.code,
  name: d.name,
  parent_code: d.parent_code ?? null,
  approver_email: d.approver_email ? normaliseEmail(d.approver_email) : null,
});

const gone = () => new ApiError("not_found", "No such department in the organization.");

/** Departments parents first (a tree walk, siblings by code), each with the deploy block it inherits. */
function chartView(rows: repo.DepartmentRow[]): DepartmentState[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const blockedBy = new Map<string, string | null>();
  for (const r of rows) {
    // walk up to a blocked department, a known answer or a root (the chart has no cycles; the bound is a guard)
    const chain: repo.DepartmentRow[] = [];
    let at: repo.DepartmentRow | undefined = r;
    while (at && !blockedBy.has(at.id) && !at.deploy_blocked && chain.length <= rows.length) {
      chain.push(at);
      at = at.parent_id === null ? undefined : byId.get(at.parent_id);
    }
    let found: string | null = null;
    if (at && blockedBy.has(at.id)) found = blockedBy.get(at.id)!;
    else if (at?.deploy_blocked) {
      found = at.code;
      blockedBy.set(at.id, found);
    }
    for (const c of chain) blockedBy.set(c.id, found);
  }
  const children = new Map<string | null, repo.DepartmentRow[]>();
  for (const r of rows) {
    const parent = r.parent_id !== null && byId.has(r.parent_id) ? r.parent_id : null;
    const siblings = children.get(parent);
    if (siblings) siblings.push(r);
    else children.set(parent, [r]);
  }
  const out: DepartmentState[] = [];
  const stack = [...(children.get(null) ?? [])].reverse();
  while (stack.length) {
    const r = stack.pop()!;
    out.push({ ...r, blocked_by: blockedBy.get(r.id) ?? null });
    stack.push(...[...(children.get(r.id) ?? [])].reverse());
  }
  return out;
}

/** The organization chart: departments (CSV, JSON sync, upsert, delete, deploy block) and the member syncs. */
export function chartService(d: ChartDeps) {
  const { db } = d;

  async function one(q: Queryable, orgId: string, ref: string): Promise<DepartmentState> {
    const row = await repo.findDepartment(q, orgId, ref);
    if (!row) throw gone();
    return { ...row, blocked_by: (await repo.deployBlockOf(q, row.id))?.code ?? null };
  }

  async function applyDepartments(p: Principal, m: OrgMembership, input: DepartmentInput[], opts: PlanOptions) {
    return auditedTransaction(db, p, async (tx) => {
      await repo.lockChart(tx, m.orgId);
      const plan = planDepartments(await repo.chartOf(tx, m.orgId), input, opts, randomUUID);
      // new parents exist before updated rows point at them; deleted rows are pointed at by nobody that stays
      await repo.insertDepartments(tx, m.orgId, plan.inserts);
      await repo.updateDepartments(tx, m.orgId, plan.updates);
      await repo.deleteDepartments(
        tx,
        m.orgId,
        plan.deletes.map((r) => r.id),
      );
      return { items: plan.items, counts: countResults(plan.items, DEPARTMENT_RESULTS) };
    });
  }

  async function applyMembers(p: Principal, m: OrgMembership, input: MemberInput[], implicitDeletion: boolean) {
    return auditedTransaction(db, p, async (tx) => {
      await repo.lockChart(tx, m.orgId);
      const departments = new Map((await repo.chartOf(tx, m.orgId)).map((r) => [r.code, r.id]));
      const plan = planMembers(await repo.memberStates(tx, m.orgId), departments, input, {
        implicitDeletion,
        callerId: p.accountId,
        callerRole: m.role,
      });
      await repo.updateMembers(tx, m.orgId, plan.updates);
      // as PATCH /v1/org/members/{id}: cached principals of a member whose role changed reload with the new role
      for (const id of plan.roleChanged) await d.tokens.announceAccountChange(tx, id);
      if (plan.removals.length) {
        const org = await orgs.findOrg(tx, m.orgId, true);
        if (!org) throw new ApiError("not_found", "The organization no longer exists.");
        for (const r of plan.removals) await removeFromOrg(tx, d, org, r.account_id);
      }
      return { items: plan.items, counts: countResults(plan.items, MEMBER_RESULTS) };
    });
  }

  return {
    async list(m: OrgMembership) {
      return chartView(await repo.listDepartments(db, m.orgId));
    },

    /** JSON sync: the whole current state from an HR system, in any order. */
    async sync(p: Principal, m: OrgMembership, input: DepartmentJson[], implicitDeletion: boolean) {
      return applyDepartments(p, m, input.map(fromJson), { implicitDeletion, parentsFirst: false });
    },

    /** CSV upload: inserts and updates the rows (parents on earlier lines); departments not in the file stay. */
    async csv(p: Principal, m: OrgMembership, text: string) {
      return applyDepartments(p, m, departmentsCsv(text), { implicitDeletion: false, parentsFirst: true });
    },

    /** Upsert by code: 201 when created. */
    async put(p: Principal, m: OrgMembership, json: DepartmentJson) {
      const input = fromJson(json);
      return auditedTransaction(db, p, async (tx) => {
        await repo.lockChart(tx, m.orgId);
        const plan = planDepartments(
          await repo.chartOf(tx, m.orgId),
          [input],
          {
            implicitDeletion: false,
            parentsFirst: false,
          },
          randomUUID,
        );
        await repo.insertDepartments(tx, m.orgId, plan.inserts);
        await repo.updateDepartments(tx, m.orgId, plan.updates);
        return { created: plan.inserts.length > 0, department: await one(tx, m.orgId, plan.ids.get(input.code)!) };
      });
    },

    /** Deletes a department: its members have none any more, its children move up under its parent. */
    async remove(p: Principal, m: OrgMembership, ref: string) {
      return auditedTransaction(db, p, async (tx) => {
        await repo.lockChart(tx, m.orgId);
        const row = await repo.findDepartment(tx, m.orgId, ref);
        if (!row) throw gone();
        const moved = await repo.reparentChildren(tx, row.id, row.parent_id);
        await repo.deleteDepartments(tx, m.orgId, [row.id]);
        return { deleted: true, code: row.code, members_unassigned: row.member_count, children_moved: moved };
      });
    },

    async setDeployBlocked(p: Principal, m: OrgMembership, ref: string, blocked: boolean) {
      return auditedTransaction(db, p, async (tx) => {
        await repo.lockChart(tx, m.orgId);
        const row = await repo.findDepartment(tx, m.orgId, ref);
        if (!row) throw gone();
        await repo.setDeployBlocked(tx, row.id, blocked);
        return one(tx, m.orgId, row.id);
      });
    },

    /** Member sync by e-mail: roles and departments of existing members; nobody joins this way. */
    async syncMembers(p: Principal, m: OrgMembership, input: MemberInput[], implicitDeletion: boolean) {
      return applyMembers(p, m, input, implicitDeletion);
    },

    /** Members CSV: like the sync without implicit deletion. */
    async membersCsv(p: Principal, m: OrgMembership, text: string) {
      return applyMembers(p, m, membersCsv(text), false);
    },
  };
}

export type ChartService = ReturnType<typeof chartService>;
