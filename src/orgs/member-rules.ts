/**
 * Who may change or remove which member (invites/README.md, "Invitations and members"): one rule for PATCH and DELETE
 * /v1/org/members/{id} and for every item of the member syncs (JSON and CSV), so a bulk route can never do what
 * the single routes refuse. The owner is never changed nor removed; only the owner grants the admin role; admins
 * are the owner's to change (role or department) or remove.
 */
import type { OrgRole } from "./contract.js";

/** What the caller does to one member: a change (role when given: the role asked for) or a removal. */
export type MemberAction = { kind: "change"; role?: "admin" | "member" } | { kind: "remove" };

/** conflict: the owner's row; forbidden_role: an admin acting on the admin role or on another admin */
export type MemberRefusal = { code: "conflict"; message: string } | { code: "forbidden_role"; message: string };

/** Null when a caller of role `caller` may do `action` to a member of role `target`, else why not. */
export function memberActionRefusal(caller: OrgRole, target: OrgRole, action: MemberAction): MemberRefusal | null {
  const removing = action.kind === "remove";
  if (target === "owner")
    return { code: "conflict", message: `The owner cannot be ${removing ? "removed" : "changed"}.` };
  if (caller === "owner") return null;
  if (action.kind === "change" && action.role === "admin" && target !== "admin")
    return { code: "forbidden_role", message: "Only the owner grants the admin role." };
  if (target === "admin")
    return { code: "forbidden_role", message: `Only the owner ${removing ? "removes" : "changes"} an admin.` };
  return null;
}
