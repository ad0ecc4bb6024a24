import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Db, Queryable } from "../../store/db.js";
import type { Kernel } from "../../kernel/kernel.js";
import type { Principal } from "../../auth/principal.js";
import { roleAtLeast, type OrgMembership } from "../public.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError } from "../../http/errors.js";
import { findOrg, visibilityRank, type OrgRow, type VisibilityLevel as Visibility } from "../public.js";
import * as repo from "./repo.js";
import {
  effectiveVisibility,
  findCompanySite,
  listCompanySites,
  visibilityInForce,
  type CompanySite,
  type VisibilitySource,
} from "./sites.js";

export interface VisibilityDeps {
  db: Db;
  kernel: Kernel;
  log: FastifyBaseLogger;
}

export interface SiteAccess {
  site: CompanySite;
  org: OrgRow;
  visibility: Visibility;
  /** no visibility of its own: the organization's default applies */
  inherited: boolean;
  /** what decided `visibility`, and the site's own setting (null: none) */
  source: VisibilitySource;
  own: Visibility | null;
  grants: repo.GrantRow[];
  pending: repo.ApprovalRow[];
}

export type PutResult = { applied: SiteAccess } | { pending: repo.ApprovalRow };

const isAdmin = (m: OrgMembership) => roleAtLeast(m.role, "admin");

function aboveMax(org: OrgRow, visibility: Visibility): void {
  if (visibilityRank(visibility) > visibilityRank(org.max_visibility))
    throw new ApiError(
      "deploy_rule_violation",
      `Visibility ${visibility} is wider than the organization's max_visibility ${org.max_visibility}.`,
    );
}

/**
 * Site visibility of company sites (README "Site visibility"): reading it with grants and pending requests,
 * setting it (the responsible member or an admin; with shared approval a non-admin's widening waits for an
 * approver), grants for `invited`, the approvals themselves, and the admins' deploy-control overview and bulk apply.
 */
export function visibilityService(d: VisibilityDeps) {
  const { db, kernel } = d;

  async function orgOf(q: Queryable, m: OrgMembership, lock = false): Promise<OrgRow> {
    const org = await findOrg(q, m.orgId, lock);
    if (!org) throw new ApiError("not_found", "The organization no longer exists.");
    return org;
  }

  async function view(q: Queryable, org: OrgRow, site: CompanySite): Promise<SiteAccess> {
    const stored = await repo.storedVisibility(q, org.id, site);
    return {
      site,
      org,
      ...visibilityInForce(stored, org),
      inherited: stored === null,
      grants: await repo.listGrants(q, site),
      pending: await repo.pendingForSite(q, site),
    };
  }

  /** The responsible member or an admin changes a site's visibility and grants; others get 403 forbidden_role. */
  function mayManage(p: Principal, m: OrgMembership, site: CompanySite): void {
    if (!isAdmin(m) && p.accountId !== site.creator)
      throw new ApiError(
        "forbidden_role",
        "Only the site's responsible member or an organization admin changes its visibility and grants.",
      );
  }

  /** Sets a site's visibility and supersedes its pending requests (but `approving`); in the caller's transaction. */
  async function apply(q: Queryable, org: OrgRow, site: repo.SiteKey, visibility: Visibility, approving?: string) {
    await repo.setVisibility(q, org.id, site, visibility);
    await repo.supersedePending(q, site, approving ?? null);
  }

  async function mayDecide(q: Queryable, p: Principal, m: OrgMembership, a: repo.ApprovalRow): Promise<void> {
    if (isAdmin(m)) return;
    const mine = a.department_id !== null && (await repo.approverDepartments(q, m.orgId, p.account.email));
    if (!mine || !mine.includes(a.department_id!) || a.requested_by === p.accountId)
      throw new ApiError(
        "forbidden_role",
        "Only the approver of the requester's department or an organization admin decides this request.",
      );
  }

  async function notifyApprover(to: string | null, a: repo.ApprovalRow): Promise<void> {
    if (!to) return;
    try {
      await kernel.mailer.send({
        to,
        subject: `Sharing request: ${a.slug} to ${a.to_visibility}`,
        text:
          `${a.requested_by_email ?? "A member"} asks to widen the visibility of ${a.slug} from ` +
          `${a.from_visibility} to ${a.to_visibility}.\n\nDecide with POST /v1/org/approvals/${a.id}/approve or ` +
          `/reject (GET /v1/org/approvals lists what waits for you).`,
      });
    } catch (err) {
      d.log.warn({ err, approval: a.id }, "approval request mail not sent");
    }
  }

  return {
    async get(m: OrgMembership, slug: string): Promise<SiteAccess> {
      const org = await orgOf(db, m);
      return view(db, org, await findCompanySite(db, kernel, m.orgId, slug));
    },

    async put(p: Principal, m: OrgMembership, slug: string, visibility: Visibility): Promise<PutResult> {
      let mailTo: string | null = null;
      const result = await auditedTransaction(db, p, async (tx): Promise<PutResult> => {
        const org = await orgOf(tx, m);
        const site = await findCompanySite(tx, kernel, m.orgId, slug);
        mayManage(p, m, site);
        aboveMax(org, visibility);
        await repo.lockSite(tx, site);
        const current = effectiveVisibility(await repo.storedVisibility(tx, org.id, site), org);
        if (org.shared_approval && !isAdmin(m) && visibilityRank(visibility) > visibilityRank(current)) {
          // the requester's department's approver decides (the nearest one up the tree), else the admins
          const deciding = m.departmentId ? await repo.decidingDepartment(tx, m.departmentId) : null;
          await repo.supersedePending(tx, site);
          const approval = await repo.insertApproval(tx, {
            id: randomUUID(),
            org_id: org.id,
            app_kind: site.kind,
            app_id: site.id,
            slug,
            requested_by: p.accountId,
            from_visibility: current,
            to_visibility: visibility,
            department_id: deciding?.id ?? null,
          });
          mailTo = deciding?.approver_email ?? null;
          return { pending: approval };
        }
        await apply(tx, org, site, visibility);
        return { applied: await view(tx, org, site) };
      });
      if ("pending" in result) await notifyApprover(mailTo, result.pending);
      return result;
    },

    async grant(p: Principal, m: OrgMembership, slug: string, email: string): Promise<repo.GrantRow> {
      return auditedTransaction(db, p, async (tx) => {
        const site = await findCompanySite(tx, kernel, m.orgId, slug);
        mayManage(p, m, site);
        const member = await repo.memberByEmail(tx, m.orgId, email);
        if (!member) throw new ApiError("not_found", `${email} is not a member of this organization.`);
        return repo.addGrant(tx, { site, orgId: m.orgId, accountId: member.account_id, grantedBy: p.accountId });
      });
    },

    async revoke(p: Principal, m: OrgMembership, slug: string, accountId: string): Promise<void> {
      await auditedTransaction(db, p, async (tx) => {
        const site = await findCompanySite(tx, kernel, m.orgId, slug);
        mayManage(p, m, site);
        if (!/^[0-9a-f-]{36}$/i.test(accountId) || !(await repo.removeGrant(tx, site, accountId)))
          throw new ApiError("not_found", "The site has no grant for this account.");
      });
    },

    /** Pending requests the caller decides: every one for admins, their departments' for approvers. */
    async approvals(p: Principal, m: OrgMembership): Promise<repo.ApprovalRow[]> {
      if (isAdmin(m)) return repo.pendingApprovals(db, m.orgId);
      const departments = await repo.approverDepartments(db, m.orgId, p.account.email);
      return departments.length ? repo.pendingApprovals(db, m.orgId, { departments, except: p.accountId }) : [];
    },

    async approve(p: Principal, m: OrgMembership, id: string) {
      return auditedTransaction(db, p, async (tx) => {
        const a = await repo.findApproval(tx, m.orgId, id, true);
        if (!a) throw new ApiError("not_found", "No such approval request in this organization.");
        await mayDecide(tx, p, m, a);
        if (a.status !== "pending") throw new ApiError("conflict", `The request is already ${a.status}.`);
        const org = await orgOf(tx, m);
        aboveMax(org, a.to_visibility);
        const site = await findCompanySite(tx, kernel, m.orgId, a.slug).catch(() => null);
        if (!site || site.kind !== a.app_kind || site.id !== a.app_id)
          throw new ApiError("conflict", `The site ${a.slug} is no longer a company site; reject the request.`);
        await repo.lockSite(tx, site);
        await apply(tx, org, site, a.to_visibility, a.id);
        await repo.decideApproval(tx, a.id, { status: "approved", by: p.accountId, note: null });
        return (await repo.findApproval(tx, m.orgId, a.id))!;
      });
    },

    async reject(p: Principal, m: OrgMembership, id: string, note: string | null) {
      return auditedTransaction(db, p, async (tx) => {
        const a = await repo.findApproval(tx, m.orgId, id, true);
        if (!a) throw new ApiError("not_found", "No such approval request in this organization.");
        await mayDecide(tx, p, m, a);
        if (a.status !== "pending") throw new ApiError("conflict", `The request is already ${a.status}.`);
        await repo.decideApproval(tx, a.id, { status: "rejected", by: p.accountId, note });
        return (await repo.findApproval(tx, m.orgId, a.id))!;
      });
    },

    /** Admin: the policy, department deploy blocks and every company site's visibility. */
    async deployControl(m: OrgMembership) {
      const org = await orgOf(db, m);
      const stored = await repo.storedVisibilities(db, org.id);
      const sites = (await listCompanySites(db, kernel, org.id)).map((site) => {
        const own = stored.get(`${site.kind}:${site.id}`) ?? null;
        return { site, ...visibilityInForce(own, org), inherited: own === null };
      });
      return {
        org,
        deployRulesSet: await repo.deployRulesSet(db, org.id),
        departments: await repo.departmentBlocks(db, org.id),
        sites,
      };
    },

    /** Admin: one visibility for every current company site (only widening with onlyWider), never above the maximum. */
    async applyToAll(p: Principal, m: OrgMembership, visibility: Visibility, onlyWider: boolean) {
      return auditedTransaction(db, p, async (tx) => {
        const org = await orgOf(tx, m, true);
        aboveMax(org, visibility);
        let changed = 0;
        let unchanged = 0;
        for (const site of await listCompanySites(tx, kernel, org.id)) {
          await repo.lockSite(tx, site);
          const current = effectiveVisibility(await repo.storedVisibility(tx, org.id, site), org);
          const skip = onlyWider ? visibilityRank(current) >= visibilityRank(visibility) : current === visibility;
          if (skip) unchanged++;
          else {
            await apply(tx, org, site, visibility);
            changed++;
          }
        }
        return { visibility, only_wider: onlyWider, changed, unchanged };
      });
    },
  };
}

export type VisibilityService = ReturnType<typeof visibilityService>;
