import type { Queryable } from "../../store/db.js";
import type { Platform } from "../../kernel/context.js";
import type { SuiteUnit } from "../provider.js";
import * as repo from "./repo.js";
import * as orgs from "../../orgs/public.js";
import type { JoinPolicy } from "./repo.js";

/**
 * What the sign-in part uses of the directory part: the join policy's one rule (who is inside it), a sync of the
 * organization's departments after a sign-in, and the department a member's suite units map to.
 */

/** The job that syncs one organization's departments and members from the suite (module.ts). */
export const SYNC_JOB = "suite.directory.sync";

export type { JoinPolicy } from "./repo.js";

/** The chosen units and every unit under them (the chart as the suite lists it; unknown ids match themselves). */
export function unitsWithDescendants(units: readonly SuiteUnit[], chosen: readonly string[]): Set<string> {
  const children = new Map<string, string[]>();
  for (const u of units) if (u.parentId !== null) children.set(u.parentId, [...(children.get(u.parentId) ?? []), u.id]);
  const inside = new Set<string>();
  const stack = [...chosen];
  while (stack.length) {
    const id = stack.pop()!;
    if (inside.has(id)) continue;
    inside.add(id);
    stack.push(...(children.get(id) ?? []));
  }
  return inside;
}

export type PolicyAnswer =
  | { inside: true }
  /** the sign-in notice that says why (suite_join_department, suite_join_invite) */
  | { inside: false; notice: "suite_join_department" | "suite_join_invite" };

/**
 * Whether a member the suite lists is inside the organization's join policy: `all` admits everyone the suite lists;
 * `departments` those with any of their units among the chosen units or under them; `invite` those an admin
 * invited (at sign-in: a pending invitation for their e-mail) or who already joined (at a sync: a member).
 * A member the suite does not list is never inside; the caller checks that first.
 */
export function insidePolicy(
  policy: { joinPolicy: JoinPolicy; joinUnits: readonly string[] },
  chart: readonly SuiteUnit[],
  memberUnitIds: readonly string[],
  opts: { invited: boolean },
): PolicyAnswer {
  if (policy.joinPolicy === "all") return { inside: true };
  if (policy.joinPolicy === "invite")
    return opts.invited ? { inside: true } : { inside: false, notice: "suite_join_invite" };
  const allowed = unitsWithDescendants(chart, policy.joinUnits);
  return memberUnitIds.some((u) => allowed.has(u))
    ? { inside: true }
    : { inside: false, notice: "suite_join_department" };
}

/**
 * Asks for a sync of the organization's departments and members (after a suite login): recorded in the caller's
 * transaction, then one job per organization (a burst of logins queues one; a sync asked for while one runs runs
 * once more after it). A job lost to a crash is made up for by the periodic sweep, which runs recorded requests.
 */
export async function requestDepartmentSync(p: Platform, q: Queryable, orgId: string): Promise<void> {
  await repo.markRequested(q, orgId);
  // inside a caller's transaction the job starts a moment later, once the request is committed
  await p.jobs
    .send(SYNC_JOB, { orgId }, { singletonKey: orgId, startAfterSeconds: q === p.db ? undefined : 2 })
    .catch((err) => p.log.warn({ err, orgId }, "suite directory sync not queued; the periodic sweep runs it"));
}

/** The organization's live department mirroring the first of the member's units (the primary first), or null. */
export async function departmentForUnits(q: Queryable, orgId: string, unitIds: string[]): Promise<string | null> {
  return unitIds.length ? orgs.departmentOfUnits(q, orgId, unitIds) : null;
}
