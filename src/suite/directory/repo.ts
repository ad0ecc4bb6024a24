/**
 * SQL of the suite's directory part: the link it reads (suite_links), the mirrored departments (org_departments'
 * suite_unit_id and removed_at, migration 048), the suite members' departments, deprovisioning marks and the sync
 * bookkeeping (suite_directory_syncs). Bulk writes are one statement over unnest()ed arrays.
 */
import { allRows, oneRow, type Queryable } from "../../store/db.js";

/** all staff, staff of the chosen units and their descendants, or staff an admin invited (migration 046) */
export type JoinPolicy = "all" | "departments" | "invite";

export interface LinkRow {
  org_id: string;
  issuer: string;
  company_id: string;
  join_policy: JoinPolicy;
  join_units: string[];
  setup_done_at: Date | null;
}

export async function linkOf(q: Queryable, orgId: string): Promise<LinkRow | null> {
  return oneRow<LinkRow>(
    q,
    `SELECT org_id, issuer, company_id, join_policy, join_units, setup_done_at FROM suite_links WHERE org_id = $1`,
    [orgId],
  );
}

/**
 * Organizations whose sync is due: a sync asked for over a minute ago and not run since (its job was lost to a
 * crash), or (setup finished, nothing asked for) the last one is older than `minutes` or there was none yet; one
 * that just failed backs off. A sync asked for within the minute is its job's: were the sweep to run it too, a
 * burst of logins would sync more than once running and once queued (a CI run counted 3 directory reads).
 */
export async function dueOrgs(q: Queryable, minutes: number): Promise<string[]> {
  const { rows } = await q.query<{ org_id: string }>(
    `SELECT l.org_id FROM suite_links l LEFT JOIN suite_directory_syncs s ON s.org_id = l.org_id
      WHERE CASE WHEN s.requested_at IS NOT NULL AND (s.synced_at IS NULL OR s.requested_at > s.synced_at)
                 THEN s.requested_at < now() - interval '1 minute'
                 ELSE l.setup_done_at IS NOT NULL
                      AND (s.synced_at IS NULL OR s.synced_at < now() - make_interval(mins => $1)) END
        -- a failed sync waits 5 minutes before the sweep tries again, unless a login asked since
        AND (s.last_error_at IS NULL OR s.last_error_at < now() - interval '5 minutes'
             OR s.requested_at > s.last_error_at)
      ORDER BY s.synced_at NULLS FIRST`,
    [minutes],
  );
  return rows.map((r) => r.org_id);
}

/**
 * Whether a sync asked for is still owed: asked for after the last sync began reading the suite (or never synced).
 * A queued job whose request an earlier sync already covered has nothing to do.
 */
export async function syncOwed(q: Queryable, orgId: string): Promise<boolean> {
  const row = await oneRow<{ owed: boolean }>(
    q,
    `SELECT requested_at IS NOT NULL AND (synced_at IS NULL OR requested_at > synced_at) AS owed
       FROM suite_directory_syncs WHERE org_id = $1`,
    [orgId],
  );
  return row?.owed ?? true;
}

export async function markRequested(q: Queryable, orgId: string): Promise<void> {
  await q.query(
    `INSERT INTO suite_directory_syncs (org_id, requested_at) VALUES ($1, now())
     ON CONFLICT (org_id) DO UPDATE SET requested_at = now()`,
    [orgId],
  );
}

/** `startedAt`: when the sync read the suite; a request made after that stays due. */
export async function markSynced(q: Queryable, orgId: string, startedAt: Date): Promise<void> {
  await q.query(
    `INSERT INTO suite_directory_syncs (org_id, synced_at) VALUES ($1, $2)
     ON CONFLICT (org_id) DO UPDATE SET synced_at = $2, last_error = NULL, last_error_at = NULL`,
    [orgId, startedAt],
  );
}

export async function markFailed(q: Queryable, orgId: string, message: string): Promise<void> {
  await q.query(
    `INSERT INTO suite_directory_syncs (org_id, last_error, last_error_at) VALUES ($1, $2, now())
     ON CONFLICT (org_id) DO UPDATE SET last_error = $2, last_error_at = now()`,
    [orgId, message.slice(0, 500)],
  );
}

/** A suite identity of the linked company not yet deprovisioned, with its membership of the organization if any. */
export interface IdentityRow {
  account_id: string;
  subject: string;
  email: string;
  role: "owner" | "admin" | "member" | null;
  department_id: string | null;
  department_code: string | null;
}

export async function liveIdentities(q: Queryable, link: LinkRow): Promise<IdentityRow[]> {
  return allRows<IdentityRow>(
    q,
    `SELECT i.account_id, i.subject, a.email, m.role, m.department_id, d.code AS department_code
       FROM suite_identities i
       JOIN accounts a ON a.id = i.account_id
       LEFT JOIN org_members m ON m.account_id = i.account_id AND m.org_id = $1
       LEFT JOIN org_departments d ON d.id = m.department_id
      WHERE i.issuer = $2 AND i.company_id = $3 AND i.deprovisioned_at IS NULL
      ORDER BY a.email`,
    [link.org_id, link.issuer, link.company_id],
  );
}

export async function markDeprovisioned(q: Queryable, accountId: string): Promise<void> {
  await q.query(
    "UPDATE suite_identities SET deprovisioned_at = now() WHERE account_id = $1 AND deprovisioned_at IS NULL",
    [accountId],
  );
}
