import type { Queryable } from "../../store/db.js";
import type { Platform } from "../../kernel/context.js";

/**
 * What the sign-in part uses of the directory part (stubs until the directory part is built): mirror the
 * organization's departments from the suite's chart after a sign-in, and the department a member's suite units map to.
 */
export async function requestDepartmentSync(p: Platform, q: Queryable, orgId: string): Promise<void> {
  void p;
  void q;
  void orgId;
}

/** The organization's department for the member's units (the primary first), or null. */
export async function departmentForUnits(q: Queryable, orgId: string, unitIds: string[]): Promise<string | null> {
  void q;
  void orgId;
  void unitIds;
  return null;
}
