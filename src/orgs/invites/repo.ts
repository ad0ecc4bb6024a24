/** SQL of invitations (org_invites) and of member changes by admins (org_members role and department). */
import { allRows, anyRows, oneRow, type Queryable } from "../../store/db.js";
import type { OrgRole } from "../public.js";

export type InviteRole = "admin" | "member";
export type InviteStatus = "pending" | "accepted" | "withdrawn";

export interface InviteRow {
  id: string;
  org_id: string;
  email: string;
  role: InviteRole;
  department_id: string | null;
  department_code: string | null;
  department_name: string | null;
  invited_by: string;
  inviter_email: string;
  inviter_name: string | null;
  status: InviteStatus;
  accepted_by: string | null;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
}

const INVITE_SELECT = `SELECT i.id, i.org_id, i.email, i.role, i.department_id, d.code AS department_code,
         d.name AS department_name, i.invited_by, a.email AS inviter_email, a.display_name AS inviter_name, i.status,
         i.accepted_by, i.created_at, i.expires_at, i.decided_at
    FROM org_invites i JOIN accounts a ON a.id = i.invited_by LEFT JOIN org_departments d ON d.id = i.department_id`;

/** The pending invitations of an organization, newest first (expired ones included: they can be renewed). */
export async function listPending(q: Queryable, orgId: string): Promise<InviteRow[]> {
  return allRows<InviteRow>(
    q,
    `${INVITE_SELECT} WHERE i.org_id = $1 AND i.status = 'pending' ORDER BY i.created_at DESC, i.email`,
    [orgId],
  );
}

export async function findById(q: Queryable, orgId: string, id: string, lock = false): Promise<InviteRow | null> {
  return oneRow<InviteRow>(q, `${INVITE_SELECT} WHERE i.org_id = $1 AND i.id = $2${lock ? " FOR UPDATE OF i" : ""}`, [
    orgId,
    id,
  ]);
}

export async function findByTokenHash(q: Queryable, hash: Buffer, lock = false): Promise<InviteRow | null> {
  return oneRow<InviteRow>(q, `${INVITE_SELECT} WHERE i.token_hash = $1${lock ? " FOR UPDATE OF i" : ""}`, [hash]);
}

export async function findPendingByEmail(q: Queryable, orgId: string, email: string): Promise<{ id: string } | null> {
  return oneRow<{ id: string }>(
    q,
    "SELECT id FROM org_invites WHERE org_id = $1 AND lower(email) = lower($2) AND status = 'pending' FOR UPDATE",
    [orgId, email],
  );
}

export interface InviteWrite {
  email: string;
  role: InviteRole;
  departmentId: string | null;
  tokenHash: Buffer;
  invitedBy: string;
  expiresAt: Date;
}

export async function insertInvite(q: Queryable, id: string, orgId: string, w: InviteWrite): Promise<void> {
  await q.query(
    `INSERT INTO org_invites (id, org_id, email, role, department_id, token_hash, invited_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, orgId, w.email, w.role, w.departmentId, w.tokenHash, w.invitedBy, w.expiresAt],
  );
}

/** A pending invitation sent again: new token (the old link stops working), role, department, inviter and expiry. */
/** Invitations of the organization created or renewed since `since` (any status): the daily sending bound. */
export async function invitedSince(q: Queryable, orgId: string, since: Date): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM org_invites WHERE org_id = $1 AND created_at > $2",
    [orgId, since],
  );
  return rows[0].n;
}

export async function renewInvite(q: Queryable, id: string, w: InviteWrite): Promise<void> {
  await q.query(
    `UPDATE org_invites SET email = $2, role = $3, department_id = $4, token_hash = $5, invited_by = $6,
            expires_at = $7, created_at = now()
      WHERE id = $1 AND status = 'pending'`,
    [id, w.email, w.role, w.departmentId, w.tokenHash, w.invitedBy, w.expiresAt],
  );
}

export async function decide(
  q: Queryable,
  id: string,
  status: "accepted" | "withdrawn",
  acceptedBy: string | null = null,
): Promise<boolean> {
  return anyRows(
    q,
    `UPDATE org_invites SET status = $2, accepted_by = $3, decided_at = now() WHERE id = $1 AND status = 'pending'`,
    [id, status, acceptedBy],
  );
}

/** Lower-cased e-mails of the organization's members among `emails`. */
export async function memberEmails(q: Queryable, orgId: string, emails: string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ email: string }>(
    `SELECT lower(a.email) AS email FROM org_members m JOIN accounts a ON a.id = m.account_id
      WHERE m.org_id = $1 AND lower(a.email) = ANY($2::text[])`,
    [orgId, emails.map((e) => e.toLowerCase())],
  );
  return new Set(rows.map((r) => r.email));
}

export async function accountEmail(q: Queryable, accountId: string): Promise<string | null> {
  const { rows } = await q.query<{ email: string }>("SELECT email FROM accounts WHERE id = $1", [accountId]);
  return rows[0]?.email ?? null;
}

export interface DepartmentRef {
  id: string;
  code: string;
}

/** The organization's departments named by id or code (ids of another organization are not found). */
export async function departmentsByRef(
  q: Queryable,
  orgId: string,
  refs: { ids: string[]; codes: string[] },
): Promise<DepartmentRef[]> {
  return allRows<DepartmentRef>(
    q,
    `SELECT id, code FROM org_departments
      WHERE org_id = $1 AND removed_at IS NULL AND (id::text = ANY($2::text[]) OR code = ANY($3::text[]))`,
    [orgId, refs.ids, refs.codes],
  );
}

export async function lockMember(
  q: Queryable,
  orgId: string,
  accountId: string,
): Promise<{ role: OrgRole; department_id: string | null } | null> {
  return oneRow<{ role: OrgRole; department_id: string | null }>(
    q,
    "SELECT role, department_id FROM org_members WHERE org_id = $1 AND account_id = $2 FOR UPDATE",
    [orgId, accountId],
  );
}

export async function updateMember(
  q: Queryable,
  orgId: string,
  accountId: string,
  m: { role: OrgRole; departmentId: string | null },
): Promise<void> {
  await q.query("UPDATE org_members SET role = $3, department_id = $4 WHERE org_id = $1 AND account_id = $2", [
    orgId,
    accountId,
    m.role,
    m.departmentId,
  ]);
}

/** One invitation round per organization at a time. */
export async function lockOrgInvites(q: Queryable, orgId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-invites:' || $1))", [orgId]);
}
