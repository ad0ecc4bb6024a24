/**
 * What other areas (and the partner area's later parts: billing/ settlement and invoices, access/ site locks, visitor
 * sessions and managed registries) may use of partners without reading its tables.
 */
import type { Queryable } from "../store/db.js";
import type { Owner } from "../kernel/owner.js";
import { findPartner, type BillingMode, type PartnerRow } from "./repo.js";
import { childById, childIdsOf, type ChildRow } from "./children/repo.js";
import { listDepartments, type DepartmentRow } from "./departments/repo.js";
import { chainOf, subtreeOf } from "./departments/plan.js";

export type { BillingMode, PartnerRow, ChildRow, DepartmentRow };
export { currentMonth, monthUsageKrw } from "./usage.js";
export { partnerOf } from "./guard.js";
export { childOwner } from "./children/service.js";
export { assertOpaque, assertVisitorUrl } from "./schemas.js";

/** The partner account, or null when the account is no partner. */
export const partnerByAccount = (q: Queryable, accountId: string): Promise<PartnerRow | null> =>
  findPartner(q, accountId);

/** The live child behind an owner of kind partner_child, with its partner; null for other owners or deleted children. */
export async function childOf(q: Queryable, owner: Owner): Promise<{ child: ChildRow; partner: PartnerRow } | null> {
  if (owner.kind !== "partner_child") return null;
  const child = await childById(q, owner.id);
  const partner = child && (await findPartner(q, child.partner_id));
  return child && partner ? { child, partner } : null;
}

/** The ids of a partner's live children. */
export const childrenOf = (q: Queryable, partnerId: string): Promise<string[]> => childIdsOf(q, partnerId);

/** A department and its ancestors (department first), and its subtree's codes, for department decisions (site locks). */
export async function departmentScope(
  q: Queryable,
  partnerId: string,
  code: string,
): Promise<{ chain: DepartmentRow[]; subtree: string[] }> {
  const all = await listDepartments(q, partnerId);
  return { chain: chainOf(all, code), subtree: subtreeOf(all, code) };
}
