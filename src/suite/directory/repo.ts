/**
 * SQL of the suite's directory part: the link it reads (suite_links), the mirrored departments (org_departments'
 * suite_unit_id and removed_at, migration 048), the suite members' departments, deprovisioning marks and the sync
 * bookkeeping (suite_directory_syncs). Bulk writes are one statement over unnest()ed arrays.
 */
import type { Queryable } from "../../store/db.js";
import type { MirrorRow, MirrorWrite } from "./plan.js";

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
  const { rows } = await q.query<LinkRow>(
    `SELECT org_id, issuer, company_id, join_policy, join_units, setup_done_at FROM suite_links WHERE org_id = $1`,
    [orgId],
  );
  return rows[0] ?? null;
}

/**
 * Organizations whose sync is due: a sync was asked for since the last one, or (setup finished) the last one is
 * older than `minutes`, or there was none yet; one that just failed backs off.
 */
export async function dueOrgs(q: Queryable, minutes: number): Promise<string[]> {
  const { rows } = await q.query<{ org_id: string }>(
    `SELECT l.org_id FROM suite_links l LEFT JOIN suite_directory_syncs s ON s.org_id = l.org_id
      WHERE ((s.requested_at IS NOT NULL AND (s.synced_at IS NULL OR s.requested_at > s.synced_at))
             OR (l.setup_done_at IS NOT NULL
                 AND (s.synced_at IS NULL OR s.synced_at < now() - make_interval(mins => $1))))
        -- a failed sync waits 5 minutes before the sweep tries again, unless a login asked since
        AND (s.last_error_at IS NULL OR s.last_error_at < now() - interval '5 minutes'
             OR s.requested_at > s.last_error_at)
      ORDER BY s.synced_at NULLS FIRST`,
    [minutes],
  );
  return rows.map((r) => r.org_id);
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

/** The same lock as the HR syncs' (src/orgs/departments/repo.ts lockChart): chart writes of one organization queue. */
export async function lockChart(q: Queryable, orgId: string): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-chart:' || $1))", [orgId]);
}

/** Every department of the organization, tombstoned ones included (a unit listed again comes back). */
export async function mirrorRows(q: Queryable, orgId: string): Promise<MirrorRow[]> {
  const { rows } = await q.query<MirrorRow>(
    "SELECT id, code, name, parent_id, suite_unit_id, removed_at FROM org_departments WHERE org_id = $1",
    [orgId],
  );
  return rows;
}

const columns = (rows: MirrorWrite[]) => [
  rows.map((r) => r.id),
  rows.map((r) => r.code),
  rows.map((r) => r.name),
  rows.map((r) => r.parentId),
  rows.map((r) => r.unitId),
];

export async function insertMirrored(q: Queryable, orgId: string, rows: MirrorWrite[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `INSERT INTO org_departments (id, org_id, code, name, parent_id, suite_unit_id)
     SELECT u.id, $1, u.code, u.name, u.parent_id, u.unit_id
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[])
            WITH ORDINALITY AS u(id, code, name, parent_id, unit_id, n)
      ORDER BY u.n`,
    [orgId, ...columns(rows)],
  );
}

/** Name, parent and unit as the suite says; a tombstoned department comes back. */
export async function updateMirrored(q: Queryable, orgId: string, rows: MirrorWrite[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE org_departments d
        SET name = u.name, parent_id = u.parent_id, suite_unit_id = u.unit_id, removed_at = NULL, updated_at = now()
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[])
            AS u(id, code, name, parent_id, unit_id)
      WHERE d.org_id = $1 AND d.id = u.id`,
    [orgId, ...columns(rows)],
  );
}

export async function tombstone(q: Queryable, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await q.query(
    "UPDATE org_departments SET removed_at = now(), updated_at = now() WHERE org_id = $1 AND id = ANY($2::uuid[])",
    [orgId, ids],
  );
}

export async function releaseUnits(q: Queryable, orgId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await q.query("UPDATE org_departments SET suite_unit_id = NULL WHERE org_id = $1 AND id = ANY($2::uuid[])", [
    orgId,
    ids,
  ]);
}

export async function departmentForUnits(q: Queryable, orgId: string, unitIds: string[]): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT id FROM org_departments
      WHERE org_id = $1 AND suite_unit_id = ANY($2::text[]) AND removed_at IS NULL
      ORDER BY array_position($2::text[], suite_unit_id) LIMIT 1`,
    [orgId, unitIds],
  );
  return rows[0]?.id ?? null;
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
  const { rows } = await q.query<IdentityRow>(
    `SELECT i.account_id, i.subject, a.email, m.role, m.department_id, d.code AS department_code
       FROM suite_identities i
       JOIN accounts a ON a.id = i.account_id
       LEFT JOIN org_members m ON m.account_id = i.account_id AND m.org_id = $1
       LEFT JOIN org_departments d ON d.id = m.department_id
      WHERE i.issuer = $2 AND i.company_id = $3 AND i.deprovisioned_at IS NULL
      ORDER BY a.email`,
    [link.org_id, link.issuer, link.company_id],
  );
  return rows;
}

export async function setDepartments(
  q: Queryable,
  orgId: string,
  rows: { accountId: string; departmentId: string | null }[],
): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE org_members m SET department_id = u.department_id
       FROM unnest($2::uuid[], $3::uuid[]) AS u(account_id, department_id)
      WHERE m.org_id = $1 AND m.account_id = u.account_id`,
    [orgId, rows.map((r) => r.accountId), rows.map((r) => r.departmentId)],
  );
}

export async function markDeprovisioned(q: Queryable, accountId: string): Promise<void> {
  await q.query(
    "UPDATE suite_identities SET deprovisioned_at = now() WHERE account_id = $1 AND deprovisioned_at IS NULL",
    [accountId],
  );
}
