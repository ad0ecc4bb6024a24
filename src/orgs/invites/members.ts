/**
 * Member management by admins (README.md here, "Invitations and members"): role and department changes and
 * removals, under the rule of member-rules.ts (the owner 409; the admin role and admins the owner's: 403
 * forbidden_role); removing oneself is POST /v1/org/leave (409 here).
 */
import type { Db } from "../../store/db.js";
import { isUuid } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import * as core from "../public.js";
import { memberActionRefusal, removeFromOrg, type ChangeDeps, type MemberAction } from "../public.js";
import { resolveDepartments, type DepartmentChoice } from "./departments.js";
import * as repo from "./repo.js";

export interface MemberChange extends DepartmentChoice {
  role?: "admin" | "member";
}

const notMember = () => new ApiError("not_found", "No such member in the organization.");

export function memberAdminService(d: ChangeDeps & { db: Db }) {
  const { db } = d;

  /** The target's membership, locked, after the rule the member syncs apply too (member-rules.ts). */
  async function target(tx: Parameters<typeof repo.lockMember>[0], m: OrgMembership, id: string, action: MemberAction) {
    const t = await repo.lockMember(tx, m.orgId, id);
    if (!t) throw notMember();
    const refusal = memberActionRefusal(m.role, t.role, action);
    if (refusal) throw new ApiError(refusal.code, refusal.message);
    return t;
  }

  return {
    async update(p: Principal, m: OrgMembership, id: string, change: MemberChange) {
      if (!isUuid(id)) throw notMember();
      if (change.role === undefined && change.department_id === undefined && change.department_code === undefined)
        throw new ApiError("invalid_request", "Give role, department_id or department_code.");
      return auditedTransaction(db, p, async (tx) => {
        const t = await target(tx, m, id, { kind: "change", role: change.role });
        const [department] = await resolveDepartments(tx, m.orgId, [change]);
        const role = change.role ?? t.role;
        await repo.updateMember(tx, m.orgId, id, {
          role,
          departmentId: department === undefined ? t.department_id : department,
        });
        if (role !== t.role) await d.tokens.announceAccountChange(tx, id);
        return (await core.findMember(tx, m.orgId, id))!;
      });
    },

    /** Company assets the member is responsible for pass to the owner; personal ones stay the member's. */
    async remove(p: Principal, m: OrgMembership, id: string) {
      if (!isUuid(id)) throw notMember();
      if (id === p.accountId)
        throw new ApiError(
          "conflict",
          m.role === "owner" ? "The owner cannot be removed." : "Nobody removes themselves; use POST /v1/org/leave.",
        );
      return auditedTransaction(db, p, async (tx) => {
        const org = await core.findOrg(tx, m.orgId, true);
        if (!org) throw new ApiError("not_found", "The organization no longer exists.");
        await target(tx, m, id, { kind: "remove" });
        return { removed: true, ...(await removeFromOrg(tx, d, org, id)) };
      });
    },
  };
}

export type MemberAdminService = ReturnType<typeof memberAdminService>;
