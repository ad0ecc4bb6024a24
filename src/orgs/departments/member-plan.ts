/**
 * The differences a member sync (JSON or CSV) makes, computed in memory over the organization's members: who
 * changes role or department, who is not a member (member_not_found: nobody joins but by invitation), which rows
 * fail on their own (unknown_department), and, with implicit_deletion, who leaves. The owner is never changed nor
 * removed; the caller is never removed by their own sync.
 */
import { ApiError } from "../../http/errors.js";
import { normaliseEmail } from "../../auth/secrets.js";
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
  /** result error: the error code (unknown_department) */
  error?: "unknown_department";
  message?: string;
}

export interface MemberPlan {
  items: MemberItem[];
  updates: MemberWrite[];
  /** members to take out of the organization (implicit_deletion) */
  removals: MemberState[];
}

const OWNER_SKIP = "the owner's row is not changed by a sync";
const CALLER_SKIP = "the caller is not removed by their own sync";

export function planMembers(
  members: MemberState[],
  departments: Map<string, string>,
  input: MemberInput[],
  opts: { implicitDeletion: boolean; callerId: string },
): MemberPlan {
  const byEmail = new Map(members.map((m) => [normaliseEmail(m.email), m]));
  const listed = new Map<string, MemberInput>();
  const items: MemberItem[] = [];
  const updates: MemberWrite[] = [];
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
    if (now.role === "owner") {
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
    const role = m.role ?? now.role;
    if (role === now.role && departmentId === now.department_id) {
      items.push({ email, result: "skip", ...at });
      continue;
    }
    updates.push({ accountId: now.account_id, role, departmentId });
    items.push({ email, result: "update", ...at });
  }

  const removals: MemberState[] = [];
  if (opts.implicitDeletion) {
    const unlisted = members
      .filter((m) => !listed.has(normaliseEmail(m.email)))
      .sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
    for (const m of unlisted) {
      if (m.role === "owner") items.push({ email: m.email, result: "skip", message: OWNER_SKIP });
      else if (m.account_id === opts.callerId) items.push({ email: m.email, result: "skip", message: CALLER_SKIP });
      else {
        removals.push(m);
        items.push({ email: m.email, result: "delete" });
      }
    }
  }
  return { items, updates, removals };
}
