/** Departments named in invitations and member changes: by id or by code, within the caller's organization. */
import type { Queryable } from "../../store/db.js";
import { ApiError } from "../../http/errors.js";
import * as repo from "./repo.js";

export interface DepartmentChoice {
  department_id?: string | null;
  department_code?: string | null;
}

/** undefined: not named (keep); null: none; a string: that department's id */
export type DepartmentPick = string | null | undefined;

const named = (c: DepartmentChoice) => c.department_id !== undefined || c.department_code !== undefined;

/**
 * Resolves every choice at once: the ids of the organization's departments, in order; an id or code the
 * organization does not have is 400 unknown_department naming it, both fields at once 400 invalid_request.
 */
export async function resolveDepartments(
  q: Queryable,
  orgId: string,
  choices: DepartmentChoice[],
): Promise<DepartmentPick[]> {
  for (const c of choices)
    if (c.department_id !== undefined && c.department_code !== undefined)
      throw new ApiError("invalid_request", "Name the department by department_id or department_code, not both.");
  const ids = choices.map((c) => c.department_id).filter((v): v is string => typeof v === "string");
  const codes = choices.map((c) => c.department_code).filter((v): v is string => typeof v === "string");
  const found = ids.length || codes.length ? await repo.departmentsByRef(q, orgId, { ids, codes }) : [];
  const byId = new Map(found.map((d) => [d.id, d.id]));
  const byCode = new Map(found.map((d) => [d.code, d.id]));
  return choices.map((c) => {
    if (!named(c)) return undefined;
    if (c.department_id === null || c.department_code === null) return null;
    const id = c.department_id !== undefined ? byId.get(c.department_id) : byCode.get(c.department_code!);
    if (!id) {
      const what = c.department_id !== undefined ? `id ${c.department_id}` : `code ${c.department_code}`;
      throw new ApiError("unknown_department", `The organization has no department with ${what}.`);
    }
    return id;
  });
}
