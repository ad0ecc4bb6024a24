/**
 * The differences a member sync (JSON or CSV) makes, computed in memory over the organization's members: who
 * changes role or department, who is not a member (member_not_found: nobody joins but by invitation), which rows
 * fail on their own (unknown_department, and forbidden_role where the rule of PATCH and DELETE
 * /v1/org/members/{id} refuses the change or removal: member-rules.ts), and, with implicit_deletion, who leaves.
 * The owner is never changed nor removed (skip); the caller is never removed by their own sync.
 */
import { ApiError } from "../../http/errors.js";
import { normaliseEmail } from "../../auth/secrets.js";
import type { OrgRole } from "../public.js";
import { memberActionRefusal } from "../public.js";
import type { MemberState, MemberWrite } from "./repo.js";

export interface MemberInput {
  email: string;
  /** undefined: unchanged; null: no department */
  department_code?: string | null;
  /** undefined: unchanged */
  role?: "admin" | "member";
  line?: number;
}

export type MemberResult = "update" | "skip" | "delete" | "member_not_found" | "error";
export const MEMBER_RESULTS = ["insert", "update", "skip", "delete", "member_not_found", "error"] as const;

export interface MemberItem {
  email: string;
  result: MemberResult;
  line?: number;
  /** result error: the error code (unknown_department, forbidden_role) */
  error?: "unknown_department" | "forbidden_role";
  message?: string;
}

export interface MemberPlan {
  items: MemberItem[];
  updates: MemberWrite[];
  /** account ids among the updates whose role changes (their cached principals reload) */
  roleChanged: string[];
  /** members to take out of the organization (implicit_deletion) */
  removals: MemberState[];
}

const OWNER_SKIP = "the owner's row is not changed by a sync";
const CALLER_SKIP = "the caller is not removed by their own sync";

export function planMembers(
  members: MemberState[],
  departments: Map<string, string>,
  input: MemberInput[],
  opts: { implicitDeletion: boolean; callerId: string; callerRole: OrgRole },
): MemberPlan {
  const byEmail = new Map(members.map((m) => [normaliseEmail(m.email), m]));
  const listed = new Map<string, MemberInput>();
  const items: MemberItem[] = [];
  const updates: MemberWrite[] = [];
  const roleChanged: string[] = [];
  for (const m of input) {
    const email = normaliseEmail(m.email);
    const first = listed.get(email);
    if (first)
      throw new ApiError(
        "invalid_request",
        `${m.line !== undefined ? `line ${m.line}` : `member ${email}`}: the e-mail ${email} appears twice${first.line !== undefined ? ` (first on line ${first.line})` : ""}.`,
      );
    listed.set(email, m);
    const at = m.line !== undefined ? { line: m.line } : {};
    const now = byEmail.get(email);
    if (!now) {
      items.push({ email, result: "member_not_found", ...at });
      continue;
    }
    // the rule of PATCH /v1/org/members/{id}, applied when the item changes something (a no-op stays a skip)
    const refusal = memberActionRefusal(opts.callerRole, now.role, { kind: "change", role: m.role });
    if (refusal?.code === "conflict") {
      items.push({ email, result: "skip", ...at, message: OWNER_SKIP });
      continue;
    }
    let departmentId = now.department_id;
    if (m.department_code !== undefined && m.department_code !== null) {
      const id = departments.get(m.department_code);
      if (id === undefined) {
        items.push({
          email,
          result: "error",
          ...at,
          error: "unknown_department",
          message: `department_code ${m.department_code} is not in the chart.`,
        });
        continue;
      }
      departmentId = id;
    } else if (m.department_code === null) {
      departmentId = null;
    }
    const role = m.role ?? (now.role as "admin" | "member");
    if (role === now.role && departmentId === now.department_id) {
      items.push({ email, result: "skip", ...at });
      continue;
    }
    if (refusal) {
      items.push({ email, result: "error", ...at, error: refusal.code, message: refusal.message });
      continue;
    }
    updates.push({ accountId: now.account_id, role, departmentId });
    if (role !== now.role) roleChanged.push(now.account_id);
    items.push({ email, result: "update", ...at });
  }

  const removals: MemberState[] = [];
  if (opts.implicitDeletion) {
    const unlisted = members
      .filter((m) => !listed.has(normaliseEmail(m.email)))
      .sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
    for (const m of unlisted) {
      // the rule of DELETE /v1/org/members/{id}
      const refusal = memberActionRefusal(opts.callerRole, m.role, { kind: "remove" });
      if (refusal?.code === "conflict") items.push({ email: m.email, result: "skip", message: OWNER_SKIP });
      else if (m.account_id === opts.callerId) items.push({ email: m.email, result: "skip", message: CALLER_SKIP });
      else if (refusal) items.push({ email: m.email, result: "error", error: refusal.code, message: refusal.message });
      else {
        removals.push(m);
        items.push({ email: m.email, result: "delete" });
      }
    }
  }
  return { items, updates, roleChanged, removals };
}
