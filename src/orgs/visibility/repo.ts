/** Site visibility SQL: org_site_access, org_site_grants, org_approvals and the department tree they read. */
import { allRows, anyRows, oneRow, type Queryable } from "../../store/db.js";
import type { OrgRole } from "../public.js";
import type { VisibilityLevel as Visibility } from "../public.js";

/** NOTIFY channel of every change the edge's decisions depend on (migration 027's triggers send it). */
export const SITE_ACCESS_CHANNEL = "org_site_access";

/** A company site as org_site_access keys it: the edge target's kind (site, pod, group) and id. */
export interface SiteKey {
  kind: string;
  id: string;
}

/** Serialises visibility changes of one site (PUT, approvals, deploy-control) until the transaction ends. */
export async function lockSite(q: Queryable, site: SiteKey): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock(hashtext('org-site:' || $1 || ':' || $2))", [site.kind, site.id]);
}

export async function storedVisibility(q: Queryable, orgId: string, site: SiteKey): Promise<Visibility | null> {
  const { rows } = await q.query<{ visibility: Visibility }>(
    "SELECT visibility FROM org_site_access WHERE app_kind = $1 AND app_id = $2 AND org_id = $3",
    [site.kind, site.id, orgId],
  );
  return rows[0]?.visibility ?? null;
}

/** Every stored visibility of the organization's sites, by `kind:id`. */
export async function storedVisibilities(q: Queryable, orgId: string): Promise<Map<string, Visibility>> {
  const { rows } = await q.query<{ app_kind: string; app_id: string; visibility: Visibility }>(
    "SELECT app_kind, app_id, visibility FROM org_site_access WHERE org_id = $1",
    [orgId],
  );
  return new Map(rows.map((r) => [`${r.app_kind}:${r.app_id}`, r.visibility]));
}

export async function setVisibility(q: Queryable, orgId: string, site: SiteKey, visibility: Visibility) {
  await q.query(
    `INSERT INTO org_site_access (app_kind, app_id, org_id, visibility) VALUES ($1, $2, $3, $4)
     ON CONFLICT (app_kind, app_id) DO UPDATE SET org_id = EXCLUDED.org_id, visibility = EXCLUDED.visibility,
       updated_at = now()`,
    [site.kind, site.id, orgId, visibility],
  );
}

/** For the edge: the site's own visibility (or the organization's default) and the maximum; null: no such org. */
/** A target's own visibility (null: none) and its organization's default and maximum; null: no such organization. */
export async function edgeVisibility(
  q: Queryable,
  orgId: string,
  site: SiteKey,
): Promise<{ stored: Visibility | null; default_visibility: Visibility; max_visibility: Visibility } | null> {
  const { rows } = await q.query<{
    stored: Visibility | null;
    default_visibility: Visibility;
    max_visibility: Visibility;
  }>({
    name: "org-edge-visibility-parts",
    text: `SELECT a.visibility AS stored, o.default_visibility, o.max_visibility
             FROM orgs o LEFT JOIN org_site_access a ON a.app_kind = $2 AND a.app_id = $3 AND a.org_id = o.id
            WHERE o.id = $1`,
    values: [orgId, site.kind, site.id],
  });
  return rows[0] ?? null;
}

export async function memberOf(
  q: Queryable,
  orgId: string,
  accountId: string,
): Promise<{ role: OrgRole; department_id: string | null } | null> {
  const { rows } = await q.query<{ role: OrgRole; department_id: string | null }>({
    name: "org-site-member",
    text: "SELECT role, department_id FROM org_members WHERE org_id = $1 AND account_id = $2",
    values: [orgId, accountId],
  });
  return rows[0] ?? null;
}

/** Whether `department` is `ancestor` or one of its sub-departments (at any depth). */
export async function inDepartment(q: Queryable, department: string, ancestor: string): Promise<boolean> {
  const { rows } = await q.query<{ inside: boolean }>({
    name: "org-in-department",
    text: `WITH RECURSIVE up(id, parent_id) AS (
             SELECT id, parent_id FROM org_departments WHERE id = $1
             UNION SELECT d.id, d.parent_id FROM org_departments d JOIN up ON d.id = up.parent_id)
           SELECT EXISTS (SELECT 1 FROM up WHERE id = $2) AS inside`,
    values: [department, ancestor],
  });
  return rows[0].inside;
}

export async function hasGrant(q: Queryable, site: SiteKey, accountId: string): Promise<boolean> {
  const { rows } = await q.query({
    name: "org-site-has-grant",
    text: "SELECT 1 FROM org_site_grants WHERE app_kind = $1 AND app_id = $2 AND account_id = $3",
    values: [site.kind, site.id, accountId],
  });
  return rows.length > 0;
}

export interface GrantRow {
  account_id: string;
  email: string;
  granted_by: string;
  created_at: Date;
}

export async function listGrants(q: Queryable, site: SiteKey): Promise<GrantRow[]> {
  return allRows<GrantRow>(
    q,
    `SELECT g.account_id, a.email, g.granted_by, g.created_at
       FROM org_site_grants g JOIN accounts a ON a.id = g.account_id
      WHERE g.app_kind = $1 AND g.app_id = $2 ORDER BY g.created_at, a.email`,
    [site.kind, site.id],
  );
}

/** Adds a grant (kept as it was when it exists); returns it. */
export async function addGrant(
  q: Queryable,
  g: { site: SiteKey; orgId: string; accountId: string; grantedBy: string },
): Promise<GrantRow> {
  await q.query(
    `INSERT INTO org_site_grants (app_kind, app_id, org_id, account_id, granted_by) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app_kind, app_id, account_id) DO NOTHING`,
    [g.site.kind, g.site.id, g.orgId, g.accountId, g.grantedBy],
  );
  return (await listGrants(q, g.site)).find((r) => r.account_id === g.accountId)!;
}

export async function removeGrant(q: Queryable, site: SiteKey, accountId: string): Promise<boolean> {
  return anyRows(q, "DELETE FROM org_site_grants WHERE app_kind = $1 AND app_id = $2 AND account_id = $3", [
    site.kind,
    site.id,
    accountId,
  ]);
}

/** A member of the organization by e-mail (any case). */
export async function memberByEmail(
  q: Queryable,
  orgId: string,
  email: string,
): Promise<{ account_id: string; email: string } | null> {
  return oneRow<{ account_id: string; email: string }>(
    q,
    `SELECT m.account_id, a.email FROM org_members m JOIN accounts a ON a.id = m.account_id
      WHERE m.org_id = $1 AND lower(a.email) = lower($2)`,
    [orgId, email.trim()],
  );
}

/** The nearest department (itself first, then up the tree) with an approver, or null. */
export async function decidingDepartment(
  q: Queryable,
  departmentId: string,
): Promise<{ id: string; approver_email: string } | null> {
  return oneRow<{ id: string; approver_email: string }>(
    q,
    `WITH RECURSIVE up(id, parent_id, approver_email, depth) AS (
       SELECT id, parent_id, approver_email, 0 FROM org_departments WHERE id = $1
       UNION ALL SELECT d.id, d.parent_id, d.approver_email, up.depth + 1
         FROM org_departments d JOIN up ON d.id = up.parent_id WHERE up.depth < 100)
     SELECT id, approver_email FROM up WHERE approver_email IS NOT NULL ORDER BY depth LIMIT 1`,
    [departmentId],
  );
}

/** Departments of the organization whose approver is this e-mail. */
export async function approverDepartments(q: Queryable, orgId: string, email: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    "SELECT id FROM org_departments WHERE org_id = $1 AND lower(approver_email) = lower($2)",
    [orgId, email],
  );
  return rows.map((r) => r.id);
}

export interface DepartmentBlockRow {
  id: string;
  code: string;
  name: string;
  parent_id: string | null;
  deploy_blocked: boolean;
  /** blocked itself or through a parent department */
  blocked: boolean;
}

export async function departmentBlocks(q: Queryable, orgId: string): Promise<DepartmentBlockRow[]> {
  return allRows<DepartmentBlockRow>(
    q,
    `WITH RECURSIVE tree(id, blocked, depth) AS (
       SELECT id, deploy_blocked, 0 FROM org_departments WHERE org_id = $1 AND parent_id IS NULL
       UNION ALL SELECT d.id, tree.blocked OR d.deploy_blocked, tree.depth + 1
         FROM org_departments d JOIN tree ON d.parent_id = tree.id WHERE tree.depth < 100)
     SELECT d.id, d.code, d.name, d.parent_id, d.deploy_blocked, COALESCE(t.blocked, d.deploy_blocked) AS blocked
       FROM org_departments d LEFT JOIN tree t ON t.id = d.id
      WHERE d.org_id = $1 AND d.removed_at IS NULL ORDER BY d.code`,
    [orgId],
  );
}

export async function deployRulesSet(q: Queryable, orgId: string): Promise<boolean> {
  const { rows } = await q.query<{ set: boolean }>(
    "SELECT deploy_rules <> '{}'::jsonb AS set FROM orgs WHERE id = $1",
    [orgId],
  );
  return rows[0]?.set ?? false;
}

export type ApprovalStatus = "pending" | "approved" | "rejected" | "superseded";

export interface ApprovalRow {
  id: string;
  org_id: string;
  app_kind: string;
  app_id: string;
  slug: string;
  requested_by: string;
  requested_by_email: string | null;
  from_visibility: Visibility;
  to_visibility: Visibility;
  department_id: string | null;
  status: ApprovalStatus;
  decided_by: string | null;
  decided_at: Date | null;
  note: string | null;
  created_at: Date;
}

const APPROVAL_SELECT = `SELECT r.id, r.org_id, r.app_kind, r.app_id, r.slug, r.requested_by, a.email AS requested_by_email,
         r.from_visibility, r.to_visibility, r.department_id, r.status, r.decided_by, r.decided_at, r.note, r.created_at
    FROM org_approvals r LEFT JOIN accounts a ON a.id = r.requested_by`;

export async function insertApproval(
  q: Queryable,
  r: Pick<
    ApprovalRow,
    "id" | "org_id" | "app_kind" | "app_id" | "slug" | "requested_by" | "from_visibility" | "to_visibility"
  > & { department_id: string | null },
): Promise<ApprovalRow> {
  await q.query(
    `INSERT INTO org_approvals (id, org_id, app_kind, app_id, slug, requested_by, from_visibility, to_visibility,
       department_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [r.id, r.org_id, r.app_kind, r.app_id, r.slug, r.requested_by, r.from_visibility, r.to_visibility, r.department_id],
  );
  return (await findApproval(q, r.org_id, r.id))!;
}

export async function findApproval(q: Queryable, orgId: string, id: string, lock = false): Promise<ApprovalRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  return oneRow<ApprovalRow>(
    q,
    `${APPROVAL_SELECT} WHERE r.id = $1 AND r.org_id = $2${lock ? " FOR UPDATE OF r" : ""}`,
    [id, orgId],
  );
}

/** Pending requests of the organization: every one, or those of some departments not made by `except`. */
export async function pendingApprovals(
  q: Queryable,
  orgId: string,
  only?: { departments: string[]; except: string },
): Promise<ApprovalRow[]> {
  const { rows } = only
    ? await q.query<ApprovalRow>(
        `${APPROVAL_SELECT} WHERE r.org_id = $1 AND r.status = 'pending' AND r.department_id = ANY($2::uuid[])
            AND r.requested_by <> $3 ORDER BY r.created_at`,
        [orgId, only.departments, only.except],
      )
    : await q.query<ApprovalRow>(
        `${APPROVAL_SELECT} WHERE r.org_id = $1 AND r.status = 'pending' ORDER BY r.created_at`,
        [orgId],
      );
  return rows;
}

export async function pendingForSite(q: Queryable, site: SiteKey): Promise<ApprovalRow[]> {
  return allRows<ApprovalRow>(
    q,
    `${APPROVAL_SELECT} WHERE r.app_kind = $1 AND r.app_id = $2 AND r.status = 'pending' ORDER BY r.created_at`,
    [site.kind, site.id],
  );
}

/** Pending requests of a site whose visibility was just set otherwise (except the one being approved). */
export async function supersedePending(q: Queryable, site: SiteKey, except: string | null = null): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE org_approvals SET status = 'superseded', decided_at = now()
      WHERE app_kind = $1 AND app_id = $2 AND status = 'pending' AND ($3::uuid IS NULL OR id <> $3)`,
    [site.kind, site.id, except],
  );
  return rowCount ?? 0;
}

export async function decideApproval(
  q: Queryable,
  id: string,
  d: { status: "approved" | "rejected"; by: string; note: string | null },
): Promise<void> {
  await q.query("UPDATE org_approvals SET status = $2, decided_by = $3, decided_at = now(), note = $4 WHERE id = $1", [
    id,
    d.status,
    d.by,
    d.note,
  ]);
}
