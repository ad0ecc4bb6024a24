/**
 * Member management by admins (README.md here, "Invitations and members"): role and department changes and
 * removals. The owner is never changed or removed (409); admins are the owner's to change or remove, and only the
 * owner grants the admin role (403 forbidden_role); removing oneself is POST /v1/org/leave (409 here).
 */
import type { Db } from "../../store/db.js";
import { isUuid } from "../../store/db.js";
import type { Principal } from "../../auth/principal.js";
import type { OrgMembership } from "../../kernel/orgs.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import * as core from "../repo.js";
import { removeFromOrg, type ChangeDeps } from "../membership-changes.js";
import { resolveDepartments, type DepartmentChoice } from "./departments.js";
import * as repo from "./repo.js";

export interface MemberChange extends DepartmentChoice {
  role?: "admin" | "member";
}

const notMember = () => new ApiError("not_found", "No such member in the organization.");

export function memberAdminService(d: ChangeDeps & { db: Db }) {
  const { db } = d;

  /** The target's membership, locked, after the rules every change shares. */
  async function target(tx: Parameters<typeof repo.lockMember>[0], m: OrgMembership, id: string, verb: string) {
    const t = await repo.lockMember(tx, m.orgId, id);
    if (!t) throw notMember();
    if (t.role === "owner") throw new ApiError("conflict", `The owner cannot be ${verb}.`);
    if (t.role === "admin" && m.role !== "owner")
      throw new ApiError("forbidden_role", `Only the owner ${verb === "removed" ? "removes" : "changes"} an admin.`);
    return t;
  }

  return {
    async update(p: Principal, m: OrgMembership, id: string, change: MemberChange) {
      if (!isUuid(id)) throw notMember();
      if (change.role === undefined && change.department_id === undefined && change.department_code === undefined)
        throw new ApiError("invalid_request", "Give role, department_id or department_code.");
      if (change.role === "admin" && m.role !== "owner")
        throw new ApiError("forbidden_role", "Only the owner grants the admin role.");
      return auditedTransaction(db, p, async (tx) => {
        const t = await target(tx, m, id, "changed");
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
        await target(tx, m, id, "removed");
        return { removed: true, ...(await removeFromOrg(tx, d, org, id)) };
      });
    },
  };
}

export type MemberAdminService = ReturnType<typeof memberAdminService>;
