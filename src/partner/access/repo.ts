/** SQL of partner site locks, invite lists and visitor sessions (migration 044). */
import { allValues, anyRows, oneRow, type Queryable } from "../../store/db.js";

export type LockMode = "tenant" | "department" | "invited";

export interface LockRow {
  site_id: string;
  partner_id: string;
  child_id: string;
  mode: LockMode;
  tenant_ref: string;
  department_code: string | null;
  updated_at: Date;
  /** the partner's visitor_login_url (where anonymous visitors go) */
  visitor_login_url: string | null;
}

export interface VisitorRow {
  id: string;
  partner_id: string;
  site_id: string;
  subject_ref: string;
  tenant_ref: string | null;
  department_code: string | null;
  return_path: string;
  expires_at: Date | null;
}

const VISITOR_COLUMNS = "id, partner_id, site_id, subject_ref, tenant_ref, department_code, return_path, expires_at";

export async function lockOf(
  q: Queryable,
  siteId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<LockRow | null> {
  return oneRow<LockRow>(
    q,
    `SELECT l.site_id, l.partner_id, l.child_id, l.mode, l.tenant_ref, l.department_code, l.updated_at,
            p.visitor_login_url
       FROM partner_site_locks l JOIN partners p ON p.account_id = l.partner_id
      WHERE l.site_id = $1${opts.forUpdate ? " FOR UPDATE OF l" : ""}`,
    [siteId],
  );
}

export async function upsertLock(
  q: Queryable,
  v: Pick<LockRow, "site_id" | "partner_id" | "child_id" | "mode" | "tenant_ref" | "department_code">,
): Promise<void> {
  await q.query(
    `INSERT INTO partner_site_locks (site_id, partner_id, child_id, mode, tenant_ref, department_code)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (site_id) DO UPDATE SET partner_id = EXCLUDED.partner_id, child_id = EXCLUDED.child_id,
       mode = EXCLUDED.mode, tenant_ref = EXCLUDED.tenant_ref, department_code = EXCLUDED.department_code,
       updated_at = now()`,
    [v.site_id, v.partner_id, v.child_id, v.mode, v.tenant_ref, v.department_code],
  );
}

export async function deleteLock(q: Queryable, siteId: string): Promise<void> {
  await q.query("DELETE FROM partner_site_locks WHERE site_id = $1", [siteId]);
}

export async function invitesOf(q: Queryable, siteId: string, tenantRef: string): Promise<string[]> {
  return allValues<string>(
    q,
    "subject_ref",
    "SELECT subject_ref FROM partner_site_invites WHERE site_id = $1 AND tenant_ref = $2 ORDER BY subject_ref",
    [siteId, tenantRef],
  );
}

export async function invited(q: Queryable, siteId: string, tenantRef: string, subjectRef: string): Promise<boolean> {
  return anyRows(q, "SELECT 1 FROM partner_site_invites WHERE site_id = $1 AND tenant_ref = $2 AND subject_ref = $3", [
    siteId,
    tenantRef,
    subjectRef,
  ]);
}

/** Drops the invite lists of every other tenant of the site (spec 13: a tenant change invalidates the old list). */
export async function dropOtherTenants(q: Queryable, siteId: string, tenantRef: string): Promise<void> {
  await q.query("DELETE FROM partner_site_invites WHERE site_id = $1 AND tenant_ref <> $2", [siteId, tenantRef]);
}

export async function replaceInvites(q: Queryable, siteId: string, tenantRef: string, refs: string[]): Promise<void> {
  await q.query("DELETE FROM partner_site_invites WHERE site_id = $1 AND tenant_ref = $2", [siteId, tenantRef]);
  await q.query(
    `INSERT INTO partner_site_invites (site_id, tenant_ref, subject_ref)
     SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
    [siteId, tenantRef, refs],
  );
}

/** Revokes every visitor session (and unused link) of a site. */
export async function revokeVisitors(q: Queryable, siteId: string): Promise<void> {
  await q.query("DELETE FROM partner_visitor_sessions WHERE site_id = $1", [siteId]);
}

export async function insertLink(
  q: Queryable,
  v: Omit<VisitorRow, "expires_at"> & { child_id: string; link_hash: Buffer; link_expires_at: Date },
): Promise<void> {
  // sessions and links an hour past their end go; nobody can use them
  await q.query(
    "DELETE FROM partner_visitor_sessions WHERE coalesce(expires_at, link_expires_at) < now() - interval '1 hour'",
  );
  await q.query(
    `INSERT INTO partner_visitor_sessions (id, partner_id, child_id, site_id, subject_ref, tenant_ref,
       department_code, return_path, link_hash, link_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      v.id,
      v.partner_id,
      v.child_id,
      v.site_id,
      v.subject_ref,
      v.tenant_ref,
      v.department_code,
      v.return_path,
      v.link_hash,
      v.link_expires_at,
    ],
  );
}

/** Follows a one-time link: once, before it expires, on its own site; it becomes a session for `ttlSeconds`. */
export async function redeemLink(
  q: Queryable,
  linkHash: Buffer,
  siteId: string,
  sessionHash: Buffer,
  ttlSeconds: number,
): Promise<VisitorRow | null> {
  return oneRow<VisitorRow>(
    q,
    `UPDATE partner_visitor_sessions
        SET link_hash = NULL, session_hash = $3, expires_at = now() + make_interval(secs => $4)
      WHERE link_hash = $1 AND site_id = $2 AND session_hash IS NULL AND link_expires_at > now()
      RETURNING ${VISITOR_COLUMNS}`,
    [linkHash, siteId, sessionHash, ttlSeconds],
  );
}

export async function liveSession(q: Queryable, sessionHash: Buffer, siteId: string): Promise<VisitorRow | null> {
  return oneRow<VisitorRow>(
    q,
    `SELECT ${VISITOR_COLUMNS} FROM partner_visitor_sessions
      WHERE session_hash = $1 AND site_id = $2 AND expires_at > now()`,
    [sessionHash, siteId],
  );
}
