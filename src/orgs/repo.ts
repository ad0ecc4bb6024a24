/**
 * The organizations core's SQL: organizations, memberships, the department tree as sub-areas walk it, and what a
 * member leaves behind (the sub-areas' own SQL is in their folders).
 */
import { allRows, anyRows, oneRow, type Queryable, returnedIds } from "../store/db.js";
import type { OrgMembership, OrgRole } from "./contract.js";

export type Visibility = "private" | "invited" | "department" | "company" | "public";
export const VISIBILITIES: readonly Visibility[] = ["private", "invited", "department", "company", "public"];
export const visibilityRank = (v: Visibility): number => VISIBILITIES.indexOf(v);

export interface OrgRow {
  id: string;
  name: string;
  owner_account_id: string;
  default_visibility: Visibility;
  max_visibility: Visibility;
  shared_approval: boolean;
  billing_mode: "personal" | "prepaid" | "card" | "suite";
  image_refresh_policy: "off" | "notify" | "auto";
  image_refresh_keep_days: number;
  /** members change and delete every company asset, not only those they are responsible for (issue 34) */
  members_manage_all_assets: boolean;
  created_at: Date;
  updated_at: Date;
}

const ORG_COLUMNS = `id, name, owner_account_id, default_visibility, max_visibility, shared_approval, billing_mode,
  image_refresh_policy, image_refresh_keep_days, members_manage_all_assets, created_at, updated_at`;

export async function membership(q: Queryable, accountId: string): Promise<OrgMembership | null> {
  const { rows } = await q.query<{ org_id: string; role: OrgRole; department_id: string | null }>({
    name: "org-membership",
    text: "SELECT org_id, role, department_id FROM org_members WHERE account_id = $1",
    values: [accountId],
  });
  const r = rows[0];
  return r ? { orgId: r.org_id, role: r.role, departmentId: r.department_id } : null;
}

/** What the company-asset change check needs: the caller's role there, the setting, the responsible member's e-mail. */
export async function assetManagement(
  q: Queryable,
  orgId: string,
  accountId: string,
  responsibleId: string | null,
): Promise<{ role: OrgRole | null; membersManageAll: boolean; responsibleEmail: string | null } | null> {
  const { rows } = await q.query<{ role: OrgRole | null; manage_all: boolean; email: string | null }>({
    name: "org-asset-management",
    text: `SELECT (SELECT role FROM org_members WHERE org_id = o.id AND account_id = $2) AS role,
                  o.members_manage_all_assets AS manage_all,
                  (SELECT email FROM accounts WHERE id = $3) AS email
             FROM orgs o WHERE o.id = $1`,
    values: [orgId, accountId, responsibleId],
  });
  const r = rows[0];
  return r ? { role: r.role, membersManageAll: r.manage_all, responsibleEmail: r.email } : null;
}

export async function findOrg(q: Queryable, id: string, lock = false): Promise<OrgRow | null> {
  return oneRow<OrgRow>(q, `SELECT ${ORG_COLUMNS} FROM orgs WHERE id = $1${lock ? " FOR UPDATE" : ""}`, [id]);
}

export async function billingModeOf(q: Queryable, id: string): Promise<OrgRow["billing_mode"] | null> {
  const { rows } = await q.query<{ billing_mode: OrgRow["billing_mode"] }>({
    name: "org-billing-mode",
    text: "SELECT billing_mode FROM orgs WHERE id = $1",
    values: [id],
  });
  return rows[0]?.billing_mode ?? null;
}

export async function insertOrg(
  q: Queryable,
  o: { id: string; name: string; ownerAccountId: string },
): Promise<OrgRow> {
  const { rows } = await q.query<OrgRow>(
    `INSERT INTO orgs (id, name, owner_account_id) VALUES ($1, $2, $3) RETURNING ${ORG_COLUMNS}`,
    [o.id, o.name, o.ownerAccountId],
  );
  return rows[0];
}

export type OrgSettings = Partial<
  Pick<
    OrgRow,
    | "name"
    | "default_visibility"
    | "max_visibility"
    | "shared_approval"
    | "billing_mode"
    | "image_refresh_policy"
    | "image_refresh_keep_days"
    | "members_manage_all_assets"
  >
>;

export async function updateOrg(q: Queryable, id: string, s: OrgSettings): Promise<OrgRow> {
  const entries = Object.entries(s).filter(([, v]) => v !== undefined);
  const sets = entries.map(([k], i) => `${k} = $${i + 2}`);
  const { rows } = await q.query<OrgRow>(
    `UPDATE orgs SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING ${ORG_COLUMNS}`,
    [id, ...entries.map(([, v]) => v)],
  );
  return rows[0];
}

export async function deleteOrg(q: Queryable, id: string): Promise<void> {
  await q.query("DELETE FROM orgs WHERE id = $1", [id]);
}

export async function addMember(
  q: Queryable,
  m: { orgId: string; accountId: string; role: OrgRole; departmentId: string | null },
): Promise<void> {
  await q.query("INSERT INTO org_members (org_id, account_id, role, department_id) VALUES ($1, $2, $3, $4)", [
    m.orgId,
    m.accountId,
    m.role,
    m.departmentId,
  ]);
}

export async function removeMember(q: Queryable, orgId: string, accountId: string): Promise<boolean> {
  return anyRows(q, "DELETE FROM org_members WHERE org_id = $1 AND account_id = $2", [orgId, accountId]);
}

/**
 * Withdraws the organization's pending invitations to these e-mails (case-insensitive); returns how many. For a
 * person who must not come back through an old invitation (suite deprovisioning).
 */
export async function withdrawInvitesTo(q: Queryable, orgId: string, emails: string[]): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE org_invites SET status = 'withdrawn', decided_at = now()
      WHERE org_id = $1 AND status = 'pending' AND lower(email) = ANY($2::text[])`,
    [orgId, emails.map((e) => e.toLowerCase())],
  );
  return rowCount ?? 0;
}

export interface MemberRow {
  account_id: string;
  email: string;
  display_name: string | null;
  role: OrgRole;
  department_id: string | null;
  department_code: string | null;
  department_name: string | null;
  joined_at: Date;
}

const MEMBER_SELECT = `SELECT m.account_id, a.email, a.display_name, m.role, m.department_id, d.code AS department_code,
         d.name AS department_name, m.joined_at
    FROM org_members m JOIN accounts a ON a.id = m.account_id LEFT JOIN org_departments d ON d.id = m.department_id`;

export async function listMembers(q: Queryable, orgId: string): Promise<MemberRow[]> {
  return allRows<MemberRow>(q, `${MEMBER_SELECT} WHERE m.org_id = $1 ORDER BY m.joined_at, a.email`, [orgId]);
}

export async function findMember(q: Queryable, orgId: string, accountId: string): Promise<MemberRow | null> {
  return oneRow<MemberRow>(q, `${MEMBER_SELECT} WHERE m.org_id = $1 AND m.account_id = $2`, [orgId, accountId]);
}

export async function memberIds(q: Queryable, orgId: string): Promise<string[]> {
  const { rows } = await q.query<{ account_id: string }>("SELECT account_id FROM org_members WHERE org_id = $1", [
    orgId,
  ]);
  return rows.map((r) => r.account_id);
}

export async function countMembers(q: Queryable, orgId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>("SELECT count(*)::int AS n FROM org_members WHERE org_id = $1", [
    orgId,
  ]);
  return rows[0].n;
}

/** One membership change per account at a time (creating an organization, accepting an invitation). */
export async function lockAccountMembership(q: Queryable, accountId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-member:' || $1))", [accountId]);
}

/** Revokes the organization keys (tokens owned by the organization) one member issued, or all; their ids. */
export async function revokeOrgTokens(q: Queryable, orgId: string, accountId?: string): Promise<string[]> {
  return returnedIds(
    q,
    `UPDATE tokens SET revoked_at = now() WHERE owner_kind = 'org' AND owner_id = $1 AND revoked_at IS NULL
        AND ($2::uuid IS NULL OR account_id = $2) RETURNING id`,
    [orgId, accountId ?? null],
  );
}

/** A leaving member's site grants and member budgets (rows of the visibility and budgets sub-areas) go. */
export async function dropMemberGrantsAndBudgets(q: Queryable, orgId: string, accountId: string): Promise<void> {
  await q.query("DELETE FROM org_site_grants WHERE org_id = $1 AND account_id = $2", [orgId, accountId]);
  await q.query("DELETE FROM org_budgets WHERE org_id = $1 AND account_id = $2", [orgId, accountId]);
}

/** The department tree, as deploy rules and budgets walk it. */
export interface DepartmentLink {
  id: string;
  code: string;
  name: string;
  deploy_blocked: boolean;
}

/** A department and its ancestors, nearest first (bounded, so a cycle cannot loop). */
export async function departmentChain(q: Queryable, departmentId: string): Promise<DepartmentLink[]> {
  const { rows } = await q.query<DepartmentLink>({
    name: "org-department-chain",
    text: `WITH RECURSIVE chain AS (
             SELECT id, parent_id, code, name, deploy_blocked, 0 AS depth FROM org_departments WHERE id = $1
             UNION ALL
             SELECT d.id, d.parent_id, d.code, d.name, d.deploy_blocked, c.depth + 1
               FROM org_departments d JOIN chain c ON d.id = c.parent_id WHERE c.depth < 64)
           SELECT id, code, name, deploy_blocked FROM chain ORDER BY depth`,
    values: [departmentId],
  });
  return rows;
}

/** Members of a department and of every department under it (bounded depth). */
export async function membersUnder(q: Queryable, departmentId: string): Promise<string[]> {
  const { rows } = await q.query<{ account_id: string }>({
    name: "org-members-under",
    text: `WITH RECURSIVE tree AS (
             SELECT id, 0 AS depth FROM org_departments WHERE id = $1
             UNION
             SELECT d.id, t.depth + 1 FROM org_departments d JOIN tree t ON d.parent_id = t.id WHERE t.depth < 64)
           SELECT DISTINCT m.account_id FROM org_members m JOIN tree t ON m.department_id = t.id`,
    values: [departmentId],
  });
  return rows.map((r) => r.account_id);
}

/**
 * Invitations as sign-in paths other than the invitation link see them (the suite's `invite` join policy): the
 * pending, unexpired invitation of an e-mail made after `since` (older ones do not admit), locked.
 */
export async function pendingInviteFor(
  q: Queryable,
  orgId: string,
  email: string,
  since: Date | null = null,
): Promise<{ id: string; role: "admin" | "member"; department_id: string | null } | null> {
  return oneRow<{ id: string; role: "admin" | "member"; department_id: string | null }>(
    q,
    `SELECT id, role, department_id FROM org_invites
      WHERE org_id = $1 AND lower(email) = lower($2) AND status = 'pending' AND expires_at > now()
        AND ($3::timestamptz IS NULL OR created_at > $3)
      FOR UPDATE`,
    [orgId, email, since],
  );
}

/** Marks a pending invitation accepted by the account (the caller adds the membership in the same transaction). */
export async function markInviteAccepted(q: Queryable, id: string, accountId: string): Promise<boolean> {
  return anyRows(
    q,
    "UPDATE org_invites SET status = 'accepted', accepted_by = $2, decided_at = now() WHERE id = $1 AND status = 'pending'",
    [id, accountId],
  );
}

/** Withdraws the pending invitations of an e-mail made up to `until` (a deprovisioned member's old ones). */
export async function withdrawInvitesOf(q: Queryable, orgId: string, email: string, until: Date): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE org_invites SET status = 'withdrawn', decided_at = now()
      WHERE org_id = $1 AND lower(email) = lower($2) AND status = 'pending' AND created_at <= $3`,
    [orgId, email, until],
  );
  return rowCount ?? 0;
}
